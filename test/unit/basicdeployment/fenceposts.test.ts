import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  maxSurge,
  maxUnavailable,
  minAvailable,
  resolveFenceposts,
  validateRollingUpdate,
} from '../../../src/controllers/basicdeployment/logic/fenceposts.ts';
import { InvalidIntOrPercentError } from '../../../src/controllers/basicdeployment/logic/int-or-percent.ts';
import type { DeploymentView } from '../../../src/controllers/basicdeployment/logic/types.ts';

describe('resolveFenceposts', () => {
  const cases: [
    surge: number | string | undefined,
    unavailable: number | string | undefined,
    desired: number,
    expected: [number, number],
  ][] = [
    ['25%', '25%', 10, [3, 2]],
    [undefined, undefined, 10, [3, 2]],
    ['0%', '0%', 0, [0, 1]],
    [0, 0, 10, [0, 1]],
    ['39%', '39%', 10, [4, 3]],
    ['0%', '1%', 2, [0, 1]],
    ['1%', '25%', 2, [1, 0]],
    ['1%', '0%', 1, [1, 0]],
    [2, 1, 10, [2, 1]],
    ['150%', '100%', 4, [6, 4]],
    ['25%', '25%', 1, [1, 0]],
  ];
  for (const [surge, unavailable, desired, [expectedSurge, expectedUnavailable]] of cases) {
    it(`maxSurge ${surge} maxUnavailable ${unavailable} of ${desired} -> surge ${expectedSurge}, unavailable ${expectedUnavailable}`, () => {
      assert.deepEqual(resolveFenceposts(surge, unavailable, desired), {
        surge: expectedSurge,
        unavailable: expectedUnavailable,
      });
    });
  }
  it('rejects invalid values, naming the field', () => {
    assert.throws(() => resolveFenceposts('oops', '39%', 10), /maxSurge/);
    assert.throws(
      () => resolveFenceposts('55%', 'urg', 10),
      (e: unknown) => e instanceof InvalidIntOrPercentError && /maxUnavailable/.test(e.message),
    );
  });
});

function rolling(replicas: number, surge: number | string, unavailable: number | string): DeploymentView {
  return {
    replicas,
    strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: surge, maxUnavailable: unavailable } },
  };
}
const recreate = (replicas: number): DeploymentView => ({ replicas, strategy: { type: 'Recreate' } });

describe('deployment fencepost helpers', () => {
  it('resolve against spec.replicas for rolling updates', () => {
    const d = rolling(10, '25%', '25%');
    assert.equal(maxSurge(d), 3);
    assert.equal(maxUnavailable(d), 2);
    assert.equal(minAvailable(d), 8);
  });
  it('clamp maxUnavailable to spec.replicas', () => {
    const d = rolling(3, 0, 5);
    assert.equal(maxUnavailable(d), 3);
    assert.equal(minAvailable(d), 0);
  });
  it('give no unavailability budget at 0 replicas', () => {
    assert.equal(maxUnavailable(rolling(0, '25%', '25%')), 0);
  });
  it('give Recreate no surge and no unavailability: every replica must be available', () => {
    const d = recreate(5);
    assert.equal(maxSurge(d), 0);
    assert.equal(maxUnavailable(d), 0);
    assert.equal(minAvailable(d), 5);
  });
  it('use the 25% defaults when rollingUpdate is missing', () => {
    const d: DeploymentView = { replicas: 8, strategy: { type: 'RollingUpdate' } };
    assert.equal(maxSurge(d), 2);
    assert.equal(maxUnavailable(d), 2);
  });
});

describe('validateRollingUpdate', () => {
  it('accepts the defaults and surge above 100%', () => {
    assert.deepEqual(validateRollingUpdate(undefined, undefined), []);
    assert.deepEqual(validateRollingUpdate('200%', 0), []);
    assert.deepEqual(validateRollingUpdate(0, 50), []);
  });
  it('rejects maxUnavailable above 100%', () => {
    assert.deepEqual(validateRollingUpdate(1, '101%'), ['maxUnavailable: must not be greater than 100%']);
  });
  it('rejects both zero, in any spelling', () => {
    assert.equal(validateRollingUpdate(0, '0%').length, 1);
    assert.equal(validateRollingUpdate('0%', 0).length, 1);
  });
  it('reports malformed values per field', () => {
    const problems = validateRollingUpdate('abc', -1);
    assert.equal(problems.length, 2);
    assert.match(problems[0]!, /^maxSurge:/);
    assert.match(problems[1]!, /^maxUnavailable:/);
  });
});
