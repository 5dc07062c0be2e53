import type { EventRecord, EventRecorder } from './recorder.ts';

/** Keeps events in memory, for unit tests of controllers that record events. */
export class MemoryEventRecorder implements EventRecorder {
  readonly events: EventRecord[] = [];

  record(event: EventRecord): void {
    this.events.push(event);
  }

  /** Reasons in recording order, the usual thing to assert on. */
  reasons(): string[] {
    return this.events.map((event) => event.reason);
  }

  clear(): void {
    this.events.length = 0;
  }
}
