import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyMergePatch, replacementMergePatch } from '../../../src/runtime/write/merge-patch.ts';
import { desiredStatus, statusChanged, statusMergePatch } from '../../../src/runtime/write/status.ts';

interface Status {
  replicas?: number;
  readyReplicas?: number;
  observedGeneration?: number;
  selector?: string;
  conditions?: { type: string; status: string }[];
  nested?: { a?: number; b?: number };
}

interface Thing {
  metadata?: { name?: string; generation?: number };
  status?: Status;
}

describe('replacementMergePatch', () => {
  it('carries every new field and null for each dropped one, recursively', () => {
    const from = { a: 1, b: { x: 1, y: 2 }, c: [1, 2], gone: 'x' };
    const to = { a: 2, b: { x: 1 }, c: [3], added: true };
    assert.deepEqual(replacementMergePatch(from, to), {
      a: 2,
      b: { x: 1, y: null },
      c: [3],
      added: true,
      gone: null,
    });
  });

  it('turns `from` into exactly `to` when applied as RFC 7386 merge patch', () => {
    const cases: [unknown, unknown][] = [
      [{ a: { b: { c: 1, d: 2 } }, e: [1] }, { a: { b: { c: 1 } } }],
      [{ a: 1 }, { a: { nested: true } }],
      [{ a: { nested: true } }, { a: 'scalar' }],
      [{}, { list: [{ x: 1 }] }],
    ];
    for (const [from, to] of cases) {
      assert.deepEqual(applyMergePatch(from, replacementMergePatch(from, to)), to);
    }
  });

  it('skips undefined members rather than deleting them twice', () => {
    assert.deepEqual(replacementMergePatch({ a: 1 }, { a: undefined, b: 2 }), { b: 2, a: null });
  });
});

describe('desiredStatus', () => {
  it('sets observedGeneration from metadata.generation and drops undefined members', () => {
    const obj: Thing = { metadata: { generation: 7 }, status: { replicas: 1 } };
    const next = desiredStatus(obj, () => ({ replicas: 3, readyReplicas: undefined, observedGeneration: 2 }));
    assert.deepEqual(next, { replicas: 3, observedGeneration: 7 });
    assert.equal(Object.hasOwn(next, 'readyReplicas'), false);
  });

  it('leaves observedGeneration alone when the object has no generation', () => {
    assert.deepEqual(
      desiredStatus({ metadata: {} } as Thing, () => ({ replicas: 1 })),
      { replicas: 1 },
    );
  });

  it('passes the object to computeStatus', () => {
    const obj: Thing = { metadata: { name: 'x', generation: 1 } };
    let seen: Thing | undefined;
    desiredStatus(obj, (o) => {
      seen = o;
      return {};
    });
    assert.equal(seen, obj);
  });
});

describe('statusChanged', () => {
  it('compares as JSON, ignoring key order and undefined members', () => {
    const current: Status = {
      replicas: 2,
      observedGeneration: 3,
      conditions: [{ type: 'Ready', status: 'True' }],
    };
    assert.equal(
      statusChanged(current, {
        conditions: [{ status: 'True', type: 'Ready' }],
        observedGeneration: 3,
        replicas: 2,
      }),
      false,
    );
    assert.equal(statusChanged({ ...current, selector: undefined }, { ...current }), false);
    assert.equal(statusChanged(undefined, {}), false);
  });

  it('notices any difference, including a new observedGeneration or list order', () => {
    const current: Status = { replicas: 2, observedGeneration: 3 };
    assert.equal(statusChanged(current, { replicas: 2, observedGeneration: 4 }), true);
    assert.equal(
      statusChanged(
        {
          conditions: [
            { type: 'A', status: 'True' },
            { type: 'B', status: 'True' },
          ],
        },
        {
          conditions: [
            { type: 'B', status: 'True' },
            { type: 'A', status: 'True' },
          ],
        },
      ),
      true,
    );
    assert.equal(statusChanged(undefined, { replicas: 0 }), true);
  });
});

describe('statusMergePatch', () => {
  it('wraps the replacement patch in {status}, nulling fields the new status drops', () => {
    const current: Status = { replicas: 2, readyReplicas: 2, nested: { a: 1, b: 2 }, observedGeneration: 1 };
    const next: Status = { replicas: 3, nested: { a: 1 }, observedGeneration: 2 };
    assert.deepEqual(statusMergePatch(current, next), {
      status: { replicas: 3, nested: { a: 1, b: null }, observedGeneration: 2, readyReplicas: null },
    });
    assert.deepEqual(applyMergePatch(current, statusMergePatch(current, next).status), next);
  });

  it('sends the whole status when there was none', () => {
    assert.deepEqual(statusMergePatch(undefined, { replicas: 1 }), { status: { replicas: 1 } });
  });
});

describe('statusReplacePatch', () => {
  it('replaces the whole status, guarded by the uid', async () => {
    const { statusReplacePatch } = await import('../../../src/runtime/write/status.ts');
    const patch = statusReplacePatch({ metadata: { uid: 'u1' } }, { replicas: 2 });
    assert.deepEqual(patch, [
      { op: 'test', path: '/metadata/uid', value: 'u1' },
      { op: 'add', path: '/status', value: { replicas: 2 } },
    ]);
  });
});
