// The contract's optional status.copyAs (docs/contracts.md): whom a provider's pod runs as, read with
// the bounds of a VolumeBackup's spec.copyAs; anything else is a violation naming the field.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type ContractViolation,
  type InfrastructureView,
  isViolation,
  readInfrastructure,
  reportableCopyAs,
} from '../../../src/apis/index.ts';

const read = (copyAs: unknown): InfrastructureView | ContractViolation =>
  readInfrastructure({ metadata: { generation: 1 }, status: { ready: true, copyAs } });

const view = (copyAs: unknown): InfrastructureView => {
  const v = read(copyAs);
  assert.ok(!isViolation(v), `unexpected violation: ${isViolation(v) ? v.violation : ''}`);
  return v;
};

const violation = (copyAs: unknown): string => {
  const v = read(copyAs);
  assert.ok(isViolation(v), `accepted ${JSON.stringify(copyAs)}`);
  return v.violation;
};

describe('readInfrastructure: status.copyAs', () => {
  it('is optional: absent, the view has none (copies run as 65532)', () => {
    const v = readInfrastructure({ status: { ready: true } });
    assert.ok(!isViolation(v));
    assert.equal(v.copyAs, undefined);
  });

  it('reads the user, the group and the fsGroup, which may be left out', () => {
    assert.deepEqual(view({ runAsUser: 999, runAsGroup: 999, fsGroup: 999 }).copyAs, {
      runAsUser: 999,
      runAsGroup: 999,
      fsGroup: 999,
    });
    assert.deepEqual(view({ runAsUser: 1, runAsGroup: 0 }).copyAs, { runAsUser: 1, runAsGroup: 0 });
    assert.deepEqual(view({ runAsUser: 2147483647, runAsGroup: 2147483647, fsGroup: 0 }).copyAs, {
      runAsUser: 2147483647,
      runAsGroup: 2147483647,
      fsGroup: 0,
    });
  });

  it('ignores fields beyond the three', () => {
    assert.deepEqual(view({ runAsUser: 5, runAsGroup: 6, seLinux: 'x' }).copyAs, {
      runAsUser: 5,
      runAsGroup: 6,
    });
  });

  const bad: Array<[string, unknown, RegExp]> = [
    ['not an object', 'root', /^status\.copyAs must be an object$/],
    ['a list', [999], /^status\.copyAs must be an object$/],
    [
      'root',
      { runAsUser: 0, runAsGroup: 0 },
      /status\.copyAs\.runAsUser must be an integer from 1 to 2147483647 \(a pod that runs as root reports no copyAs\), not 0/,
    ],
    ['no user', { runAsGroup: 999 }, /status\.copyAs\.runAsUser .* not undefined/],
    ['a user as a string', { runAsUser: '999', runAsGroup: 999 }, /status\.copyAs\.runAsUser .* not "999"/],
    ['a fractional user', { runAsUser: 9.5, runAsGroup: 999 }, /status\.copyAs\.runAsUser .* not 9\.5/],
    [
      'a user beyond 2^31-1',
      { runAsUser: 2147483648, runAsGroup: 1 },
      /status\.copyAs\.runAsUser .* not 2147483648/,
    ],
    [
      'no group',
      { runAsUser: 999 },
      /status\.copyAs\.runAsGroup must be an integer from 0 to 2147483647, not undefined/,
    ],
    ['a negative group', { runAsUser: 999, runAsGroup: -1 }, /status\.copyAs\.runAsGroup .* not -1/],
    [
      'a negative fsGroup',
      { runAsUser: 999, runAsGroup: 999, fsGroup: -5 },
      /status\.copyAs\.fsGroup must be an integer from 0 to 2147483647 when set, not -5/,
    ],
    [
      'a null fsGroup',
      { runAsUser: 999, runAsGroup: 999, fsGroup: null },
      /status\.copyAs\.fsGroup .* not null/,
    ],
  ];
  for (const [what, copyAs, says] of bad) {
    it(`is a violation for ${what}`, () => assert.match(violation(copyAs), says));
  }
});

describe('reportableCopyAs: what a provider reports for its pod', () => {
  it('the identity, when every id is within the bounds', () => {
    assert.deepEqual(reportableCopyAs({ runAsUser: 999, runAsGroup: 0, fsGroup: 999 }), {
      runAsUser: 999,
      runAsGroup: 0,
      fsGroup: 999,
    });
    assert.equal(reportableCopyAs(undefined), undefined);
  });

  it('nothing for an id beyond them (the API server refuses such a pod; the status must still say so)', () => {
    assert.equal(reportableCopyAs({ runAsUser: 3000000000, runAsGroup: 1 }), undefined);
    assert.equal(reportableCopyAs({ runAsUser: 1, runAsGroup: 1, fsGroup: 2147483648 }), undefined);
  });
});
