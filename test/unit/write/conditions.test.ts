import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  boundedConditionMessage,
  CONDITION_MESSAGE_CHARACTERS,
  type Condition,
  conditionProblems,
  findCondition,
  removeCondition,
  rfc3339,
  setCondition,
  setStalled,
} from '../../../src/runtime/write/conditions.ts';

const T0 = new Date('2024-05-01T12:00:00.750Z');
const T1 = new Date('2024-05-01T12:05:00.000Z');

const ready = (status: 'True' | 'False' | 'Unknown', reason = 'PodsReady', message = 'all good') => ({
  type: 'Ready',
  status,
  reason,
  message,
});

describe('rfc3339', () => {
  it('formats UTC with whole seconds, like metav1.Time', () => {
    assert.equal(rfc3339(T0), '2024-05-01T12:00:00Z');
  });
});

describe('setCondition', () => {
  it('appends a new type with lastTransitionTime = now', () => {
    const result = setCondition(undefined, { ...ready('True'), observedGeneration: 3 }, T0);
    assert.deepEqual(result, [
      {
        type: 'Ready',
        status: 'True',
        reason: 'PodsReady',
        message: 'all good',
        observedGeneration: 3,
        lastTransitionTime: '2024-05-01T12:00:00Z',
      },
    ]);
  });

  it('keeps lastTransitionTime when the status does not change, updating reason, message, generation', () => {
    const first = setCondition([], { ...ready('False', 'Scaling', 'waiting'), observedGeneration: 1 }, T0);
    const second = setCondition(
      first,
      { ...ready('False', 'Stuck', 'still waiting'), observedGeneration: 2 },
      T1,
    );
    assert.deepEqual(second, [
      {
        type: 'Ready',
        status: 'False',
        reason: 'Stuck',
        message: 'still waiting',
        observedGeneration: 2,
        lastTransitionTime: '2024-05-01T12:00:00Z',
      },
    ]);
  });

  it('moves lastTransitionTime when the status changes', () => {
    const first = setCondition([], ready('False'), T0);
    const second = setCondition(first, ready('True'), T1);
    assert.equal(second[0]?.lastTransitionTime, '2024-05-01T12:05:00Z');
    assert.equal(second[0]?.status, 'True');
  });

  it('uses an explicit lastTransitionTime only on a transition', () => {
    const first = setCondition([], { ...ready('False'), lastTransitionTime: '2020-01-01T00:00:00Z' }, T0);
    assert.equal(first[0]?.lastTransitionTime, '2020-01-01T00:00:00Z');
    const same = setCondition(first, { ...ready('False'), lastTransitionTime: '2021-01-01T00:00:00Z' }, T1);
    assert.equal(same[0]?.lastTransitionTime, '2020-01-01T00:00:00Z');
    const flipped = setCondition(first, { ...ready('True'), lastTransitionTime: '2022-01-01T00:00:00Z' }, T1);
    assert.equal(flipped[0]?.lastTransitionTime, '2022-01-01T00:00:00Z');
  });

  it('drops observedGeneration when the new condition has none, as meta.SetStatusCondition does', () => {
    const first = setCondition([], { ...ready('True'), observedGeneration: 4 }, T0);
    const second = setCondition(first, ready('True'), T1);
    assert.equal(Object.hasOwn(second[0]!, 'observedGeneration'), false);
  });

  it('keeps the order and the other conditions, and never mutates its input', () => {
    const input: Condition[] = [
      {
        type: 'Available',
        status: 'True',
        reason: 'MinimumReplicasAvailable',
        message: '',
        lastTransitionTime: 'a',
      },
      { type: 'Ready', status: 'False', reason: 'Scaling', message: '', lastTransitionTime: 'b' },
      {
        type: 'Progressing',
        status: 'True',
        reason: 'NewReplicaSetAvailable',
        message: '',
        lastTransitionTime: 'c',
      },
    ];
    const snapshot = structuredClone(input);
    const result = setCondition(input, ready('True'), T1);
    assert.deepEqual(input, snapshot);
    assert.deepEqual(
      result.map((condition) => condition.type),
      ['Available', 'Ready', 'Progressing'],
    );
    assert.equal(result[0], input[0]);
    assert.equal(result[2], input[2]);
  });

  it('gives a deep-equal result when nothing changes, so status writes can be skipped', () => {
    const first = setCondition([], { ...ready('True'), observedGeneration: 1 }, T0);
    assert.deepEqual(setCondition(first, { ...ready('True'), observedGeneration: 1 }, T1), first);
  });

  it('throws on reasons that are not CamelCase, and on other invalid fields', () => {
    for (const reason of ['', 'podsReady', 'Pods Ready', 'Pods-Ready', 'Ready,', 'x'.repeat(2000)]) {
      assert.throws(() => setCondition([], ready('True', reason), T0), TypeError, reason);
    }
    for (const reason of ['Ready', 'MinimumReplicasAvailable', 'Failed_Create', 'A1']) {
      assert.doesNotThrow(() => setCondition([], ready('True', reason), T0), reason);
    }
    assert.throws(() => setCondition([], { ...ready('True'), type: 'not valid!' }, T0), TypeError);
    assert.throws(() => setCondition([], { ...ready('True'), observedGeneration: -1 }, T0), TypeError);
  });
});

describe('setCondition with a message longer than a condition keeps', () => {
  const long = `admission webhook "deny.example.com" denied the request: ${'x'.repeat(40 * 1024)}`;

  it('cuts it to 4096 characters, saying how much was cut: never refused, and not copied whole into every status', () => {
    assert.equal(CONDITION_MESSAGE_CHARACTERS, 4096);
    const [condition] = setCondition([], { ...ready('False', 'PodRefused', long) }, T0);
    assert.ok(condition);
    assert.equal([...condition.message].length, 4096);
    assert.match(condition.message.slice(-40), /\.\.\. \(\d+ more characters\)$/);
    assert.ok(long.startsWith(condition.message.slice(0, condition.message.indexOf('...'))));
    assert.deepEqual(conditionProblems(condition), []);
  });

  it('cuts it the same way every time, so an unchanged condition is not written again', () => {
    const first = setCondition([], { ...ready('False', 'PodRefused', long) }, T0);
    assert.deepEqual(setCondition(first, { ...ready('False', 'PodRefused', long) }, T1), first);
  });

  it('cuts a Stalled message too', () => {
    const [stalled] = setStalled([], { reason: 'PodFailed', message: long }, 2, T0);
    assert.equal([...(stalled?.message ?? '')].length, 4096);
  });

  it('keeps a message of exactly 4096 characters whole, counting characters rather than UTF-16 units', () => {
    const emoji = '😀'.repeat(4096);
    assert.equal(setCondition([], { ...ready('False', 'X', emoji) }, T0)[0]?.message, emoji);
  });
});

describe('boundedConditionMessage', () => {
  it('is the cut setCondition applies, for status fields that repeat a condition message', () => {
    const long = 'y'.repeat(50_000);
    assert.equal(
      boundedConditionMessage(long),
      setCondition([], { ...ready('False', 'X', long) }, T0)[0]?.message,
    );
    assert.equal(boundedConditionMessage('short'), 'short');
  });
});

describe('conditionProblems', () => {
  it('accepts a domain-prefixed type and explains what is wrong', () => {
    assert.deepEqual(
      conditionProblems({ ...ready('True'), type: 'infra.basicoperator.dev/BackupReady' }),
      [],
    );
    assert.deepEqual(conditionProblems(ready('True', 'lower')), [
      'reason "lower" is not CamelCase (e.g. MinimumReplicasAvailable)',
    ]);
  });
});

describe('condition queries', () => {
  const conditions = setCondition(
    setCondition([], ready('True'), T0),
    { ...ready('False'), type: 'Available' },
    T0,
  );

  it('findCondition', () => {
    assert.equal(findCondition(conditions, 'Available')?.status, 'False');
    assert.equal(findCondition(conditions, 'Missing'), undefined);
    assert.equal(findCondition(undefined, 'Ready'), undefined);
  });

  it('removeCondition returns a copy without that type', () => {
    assert.deepEqual(
      removeCondition(conditions, 'Ready').map((condition) => condition.type),
      ['Available'],
    );
    assert.equal(conditions.length, 2);
    assert.deepEqual(removeCondition(undefined, 'Ready'), []);
  });
});
