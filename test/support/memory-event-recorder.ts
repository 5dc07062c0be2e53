import type { EventRecord, EventRecorder } from '../../src/runtime/events/recorder.ts';

/** Keeps events in memory, for tests of controllers that record events. */
export class MemoryEventRecorder implements EventRecorder {
  readonly events: EventRecord[] = [];

  record(event: EventRecord): void {
    this.events.push(event);
  }
}
