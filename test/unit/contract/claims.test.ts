import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import {
  claimNamesOf,
  claimsNotKept,
  describeClaimsInUse,
  podsUsingClaims,
  volumesDropped,
} from '../../../e2e/contract/claims.ts';

function pod(name: string, claims: string[], phase?: string, terminating = false): V1Pod {
  return {
    metadata: { name, ...(terminating ? { deletionTimestamp: new Date('2026-01-01T00:00:00Z') } : {}) },
    spec: {
      containers: [{ name: 'c' }],
      volumes: [
        { name: 'scratch', emptyDir: {} },
        ...claims.map((claimName, i) => ({ name: `v${i}`, persistentVolumeClaim: { claimName } })),
      ],
    },
    ...(phase ? { status: { phase } } : {}),
  };
}

const claim = (name: string, deleting = false): V1PersistentVolumeClaim => ({
  metadata: { name, ...(deleting ? { deletionTimestamp: new Date('2026-01-01T00:00:00Z') } : {}) },
});

describe('podsUsingClaims', () => {
  const claims = new Set(['m-data', 'm-logs']);

  it('finds every pod that has not finished and mounts a reported claim', () => {
    const inUse = podsUsingClaims(
      [
        pod('m', ['m-logs', 'm-data'], 'Running'),
        pod('starting', ['m-data']),
        pod('stopping', ['m-data'], 'Running', true),
        pod('other', ['other-data'], 'Running'),
        pod('done', ['m-data'], 'Succeeded'),
        pod('crashed', ['m-logs'], 'Failed'),
      ],
      claims,
    );
    assert.deepEqual(inUse, [
      { pod: 'm', phase: 'Running', terminating: false, claims: ['m-data', 'm-logs'] },
      { pod: 'starting', phase: 'Pending', terminating: false, claims: ['m-data'] },
      { pod: 'stopping', phase: 'Running', terminating: true, claims: ['m-data'] },
    ]);
    assert.equal(
      describeClaimsInUse(inUse),
      'pod m (Running) mounts m-data, m-logs; pod starting (Pending) mounts m-data; pod stopping (Running, terminating) mounts m-data',
    );
  });

  it('finds nothing when no pod mounts the claims, or there are no claims', () => {
    assert.deepEqual(
      podsUsingClaims([pod('other', ['x'], 'Running'), { metadata: { name: 'bare' } }], claims),
      [],
    );
    assert.deepEqual(podsUsingClaims([pod('m', ['m-data'], 'Running')], new Set()), []);
  });
});

describe('claimsNotKept', () => {
  it('names the claims that are gone or being deleted', () => {
    assert.deepEqual(
      claimsNotKept(new Set(['a', 'b', 'c']), [claim('a'), claim('b', true), claim('unrelated')]),
      ['claim b is being deleted', 'claim c is gone'],
    );
    assert.deepEqual(claimsNotKept(new Set(['a']), [claim('a')]), []);
  });
});

describe('volumesDropped', () => {
  it('names volumes the stopped status no longer lists or gives another claim', () => {
    const before = [
      { name: 'data', claimName: 'm-data' },
      { name: 'logs', claimName: 'm-logs' },
      { name: 'cache', claimName: 'm-cache' },
    ];
    const after = [
      { name: 'data', claimName: 'm-data', phase: 'Bound' },
      { name: 'logs', claimName: 'm-logs-2' },
    ];
    assert.deepEqual(volumesDropped(before, after), [
      'status.volumes now gives logs the claim m-logs-2, not m-logs',
      'status.volumes no longer lists cache (claim m-cache)',
    ]);
    assert.deepEqual(volumesDropped(before, [...before]), []);
  });
});

describe('claimNamesOf', () => {
  it('joins the claims of every list, absent lists included', () => {
    assert.deepEqual(
      [
        ...claimNamesOf([{ name: 'a', claimName: 'x-a' }], undefined, [
          { name: 'b', claimName: 'x-b' },
          { name: 'a', claimName: 'x-a' },
        ]),
      ].sort(),
      ['x-a', 'x-b'],
    );
  });
});
