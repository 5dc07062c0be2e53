import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ResourceType } from '../../../src/runtime/client/resource.ts';
import {
  buildEvent,
  type EventOccurrence,
  eventName,
  eventNamespace,
  microTime,
  NOTE_MAX_BYTES,
  objectReference,
  occurrenceProblems,
  randomEventSuffix,
  seriesPatch,
} from '../../../src/runtime/events/event-object.ts';
import { firstUtf8Bytes } from '../../../src/runtime/text-limits.ts';

/** The cut without a marker that buildEvent's cut builds on. */
const truncateNote = (note: string): string => firstUtf8Bytes(note, NOTE_MAX_BYTES);

const MachineType: ResourceType = {
  group: 'infra.basicoperator.dev',
  version: 'v1alpha1',
  kind: 'Machine',
  plural: 'machines',
  namespaced: true,
};

const occurrence: EventOccurrence = {
  regarding: {
    apiVersion: 'infra.basicoperator.dev/v1alpha1',
    kind: 'Machine',
    namespace: 'ns',
    name: 'm1',
    uid: 'u1',
  },
  type: 'Warning',
  reason: 'BackupFailed',
  action: 'Backup',
  note: 'job failed',
};

describe('microTime', () => {
  it('formats UTC with six fractional digits', () => {
    assert.equal(microTime(new Date('2024-05-01T12:00:00.123Z')), '2024-05-01T12:00:00.123000Z');
  });
});

describe('truncateNote', () => {
  it('keeps notes up to 1 KiB and cuts longer ones to exactly 1 KiB of ASCII', () => {
    assert.equal(truncateNote('short'), 'short');
    assert.equal(truncateNote('x'.repeat(NOTE_MAX_BYTES)).length, NOTE_MAX_BYTES);
    assert.equal(truncateNote('x'.repeat(5000)), 'x'.repeat(NOTE_MAX_BYTES));
  });

  it('never splits a multi-byte character', () => {
    const note = `${'x'.repeat(NOTE_MAX_BYTES - 1)}€ and more`; // € is 3 bytes and straddles the limit
    const cut = truncateNote(note);
    assert.equal(cut, 'x'.repeat(NOTE_MAX_BYTES - 1));
    assert.ok(Buffer.byteLength(cut) <= NOTE_MAX_BYTES);
    const emoji = '😀'.repeat(400); // 4 bytes each
    const cutEmoji = truncateNote(emoji);
    assert.equal(Buffer.byteLength(cutEmoji), NOTE_MAX_BYTES);
    assert.equal(cutEmoji, '😀'.repeat(256));
  });
});

describe('objectReference', () => {
  it('copies the identifying fields of the object', () => {
    const machine = {
      apiVersion: 'infra.basicoperator.dev/v1alpha1',
      kind: 'Machine',
      metadata: { name: 'm1', namespace: 'ns', uid: 'u1', resourceVersion: '9', labels: { a: 'b' } },
    };
    assert.deepEqual(objectReference(machine), { ...occurrence.regarding, resourceVersion: '9' });
  });

  it('takes apiVersion and kind from the resource type when the object lacks them', () => {
    assert.deepEqual(
      objectReference({ metadata: { name: 'm1', namespace: 'ns', uid: 'u1' } }, MachineType),
      occurrence.regarding,
    );
  });

  it('leaves out what is unknown', () => {
    assert.deepEqual(objectReference({ metadata: { name: 'node-1' } }), { name: 'node-1' });
  });
});

describe('eventNamespace', () => {
  it("is the regarding object's namespace, or default for cluster-scoped objects", () => {
    assert.equal(eventNamespace(occurrence.regarding), 'ns');
    assert.equal(eventNamespace({ kind: 'Namespace', name: 'ns' }), 'default');
  });
});

describe('eventName', () => {
  it('is <regarding name>.<suffix>', () => {
    assert.equal(eventName(occurrence.regarding, '17c0ffee'), 'm1.17c0ffee');
  });

  it('cuts a long name so the result stays a valid 253-character name', () => {
    const name = eventName({ name: `${'a'.repeat(240)}.b-c` }, '0123456789abcdef');
    assert.equal(name.length <= 253, true);
    assert.match(name, /^a+\.0123456789abcdef$/);
  });

  it('random suffixes are 16 hex digits and differ', () => {
    const a = randomEventSuffix();
    assert.match(a, /^[0-9a-f]{16}$/);
    assert.notEqual(a, randomEventSuffix());
  });
});

describe('occurrenceProblems', () => {
  it('accepts a well-formed occurrence and explains bad ones', () => {
    assert.deepEqual(occurrenceProblems(occurrence), []);
    assert.deepEqual(
      occurrenceProblems({
        ...occurrence,
        type: 'Error' as 'Warning',
        reason: '',
        action: 'x'.repeat(129),
        regarding: {},
      }),
      [
        'type "Error" is not Normal or Warning',
        'reason must be 1-128 characters',
        'action must be 1-128 characters',
        'the regarding object has no name',
      ],
    );
  });
});

describe('buildEvent', () => {
  const identity = {
    name: 'm1.abc',
    reportingController: 'basic-operator',
    reportingInstance: 'basic-operator-7d9f-xyz',
    labels: { 'app.kubernetes.io/managed-by': 'basic-operator' },
  };
  const first = new Date('2024-05-01T12:00:00.000Z');
  const last = new Date('2024-05-01T12:03:00.500Z');

  it('builds an events.k8s.io/v1 Event without a series for a single occurrence', () => {
    assert.deepEqual(
      buildEvent(occurrence, identity, { count: 1, firstObserved: first, lastObserved: first }),
      {
        apiVersion: 'events.k8s.io/v1',
        kind: 'Event',
        metadata: {
          name: 'm1.abc',
          namespace: 'ns',
          labels: { 'app.kubernetes.io/managed-by': 'basic-operator' },
        },
        eventTime: '2024-05-01T12:00:00.000000Z',
        reportingController: 'basic-operator',
        reportingInstance: 'basic-operator-7d9f-xyz',
        action: 'Backup',
        reason: 'BackupFailed',
        regarding: occurrence.regarding,
        note: 'job failed',
        type: 'Warning',
      },
    );
  });

  it('includes the series once an occurrence repeated, and truncates the note', () => {
    const event = buildEvent({ ...occurrence, note: 'n'.repeat(3000) }, identity, {
      count: 3,
      firstObserved: first,
      lastObserved: last,
    });
    assert.deepEqual(event.series, { count: 3, lastObservedTime: '2024-05-01T12:03:00.500000Z' });
    assert.equal(event.eventTime, '2024-05-01T12:00:00.000000Z');
    assert.equal(event.note?.length, NOTE_MAX_BYTES);
  });

  it('cuts a long note to 1 KiB of UTF-8, ending in how many bytes were cut', () => {
    const note = `admission webhook denied the request: ${'€'.repeat(14_000)}`; // about 40 KiB
    const event = buildEvent({ ...occurrence, note }, identity, {
      count: 1,
      firstObserved: first,
      lastObserved: first,
    });
    const cut = event.note ?? '';
    assert.ok(Buffer.byteLength(cut) <= NOTE_MAX_BYTES);
    const kept = cut.slice(0, cut.indexOf('...'));
    assert.ok(note.startsWith(kept));
    assert.equal(
      cut.slice(kept.length),
      `... (${Buffer.byteLength(note) - Buffer.byteLength(kept)} more bytes)`,
    );
  });

  it('puts events about cluster-scoped objects in default', () => {
    const event = buildEvent(
      { ...occurrence, regarding: { kind: 'Namespace', name: 'ns', uid: 'n' } },
      identity,
      {
        count: 1,
        firstObserved: first,
        lastObserved: first,
      },
    );
    assert.equal(event.metadata?.namespace, 'default');
  });
});

describe('seriesPatch', () => {
  it('is the merge patch of the series only', () => {
    assert.deepEqual(
      seriesPatch({
        count: 4,
        firstObserved: new Date(0),
        lastObserved: new Date('2024-05-01T12:00:01.000Z'),
      }),
      { series: { count: 4, lastObservedTime: '2024-05-01T12:00:01.000000Z' } },
    );
  });
});
