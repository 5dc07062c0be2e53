import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  checkNoFailure,
  checkReadyConditionCurrent,
  checkWellTyped,
  describeStatus,
  readiness,
} from '../../../e2e/contract/status.ts';
import type { UnstructuredObject } from '../../../src/apis/infra/contract/index.ts';

const object = (status: unknown, generation = 2): UnstructuredObject => ({
  metadata: { name: 'm', generation },
  ...(status === undefined ? {} : { status }),
});

const ready = (extra: Record<string, unknown> = {}) => ({
  type: 'Ready',
  status: 'True',
  reason: 'PodReady',
  message: 'the pod runs',
  lastTransitionTime: '2026-01-01T00:00:00Z',
  ...extra,
});

describe('readiness', () => {
  it('is ready, waiting, broken, failed or gone', () => {
    assert.equal(readiness(object({ ready: true })).state, 'ready');
    assert.equal(readiness(object({ conditions: [ready({ observedGeneration: 2 })] })).state, 'ready');
    assert.equal(readiness(object({ conditions: [ready({ observedGeneration: 1 })] })).state, 'waiting');
    assert.equal(readiness(object(undefined)).state, 'waiting');
    assert.deepEqual(readiness(object({ ready: 'yes' })), {
      state: 'broken',
      violation: 'status.ready must be a boolean',
    });
    assert.deepEqual(
      readiness(object({ ready: true, failureReason: 'ImageRefused', failureMessage: 'no such image' })),
      {
        state: 'failed',
        reason: 'ImageRefused',
        message: 'no such image',
      },
    );
    assert.deepEqual(readiness(undefined), { state: 'gone' });
  });
});

describe('describeStatus', () => {
  it('says what the status shows in one line', () => {
    assert.equal(describeStatus(undefined), 'the object is gone');
    assert.equal(describeStatus(object(undefined)), 'no status yet');
    assert.equal(
      describeStatus(
        object({
          conditions: [
            ready({ status: 'False', reason: 'Pending', message: 'pod pending', observedGeneration: 2 }),
          ],
        }),
      ),
      'Ready=False (Pending: pod pending), observedGeneration 2 of generation 2',
    );
    assert.equal(
      describeStatus(object({ ready: false, stopped: false, volumes: [{}, {}] })),
      'status.ready=false, status.stopped=false, 2 volume(s)',
    );
    assert.equal(
      describeStatus(object({})),
      'no readiness reported (neither a Ready condition nor status.ready)',
    );
    assert.equal(
      describeStatus(object({ ready: false, failureReason: 'Bad' })),
      'status.ready=false, failure "Bad"',
    );
  });
});

describe('checkReadyConditionCurrent', () => {
  it('passes readiness by status.ready, and a Ready condition of the current generation', () => {
    assert.equal(
      checkReadyConditionCurrent(object({ ready: true })).detail,
      'readiness reported by status.ready (no Ready condition)',
    );
    assert.equal(
      checkReadyConditionCurrent(object({ conditions: [ready({ observedGeneration: 2 })] })).status,
      'pass',
    );
  });

  it('fails a Ready condition without observedGeneration or of an older generation', () => {
    assert.match(
      checkReadyConditionCurrent(object({ conditions: [ready()] })).detail,
      /^the Ready condition has no observedGeneration/,
    );
    assert.equal(
      checkReadyConditionCurrent(object({ conditions: [ready({ observedGeneration: 1 })] })).detail,
      'Ready=True is for generation 1, the object is at generation 2',
    );
  });
});

describe('checkNoFailure and checkWellTyped', () => {
  it('fail a reported failure and a field of the wrong type, saying which', () => {
    assert.equal(checkNoFailure(object({ ready: true })).status, 'pass');
    assert.equal(
      checkNoFailure(object({ failureReason: 'ImageRefused', failureMessage: 'no such image' })).detail,
      'terminal failure reported: failureReason "ImageRefused", failureMessage "no such image"',
    );
    assert.equal(
      checkWellTyped(object({ ready: true, addresses: [{ type: 'InternalIP' }] })).detail,
      'the status breaks the contract: status.addresses[0] must have string fields type and address',
    );
    assert.equal(
      checkWellTyped(object({ ready: true, providerID: 7 })).detail,
      'the status breaks the contract: status.providerID must be a string',
    );
  });

  it('lists the optional fields it saw', () => {
    assert.equal(
      checkWellTyped(
        object({
          ready: true,
          providerID: 'pod://ns/m',
          addresses: [{ type: 'InternalIP', address: '10.0.0.7' }],
          volumes: [{ name: 'data', claimName: 'm-data', phase: 'Bound' }],
        }),
      ).detail,
      'providerID pod://ns/m; addresses InternalIP=10.0.0.7; volumes data→m-data',
    );
    assert.equal(checkWellTyped(object({ ready: true })).detail, 'no providerID; no addresses; no volumes');
  });
});
