import type { KubeObject } from '../client/object.ts';
import type { EventType } from './event-object.ts';
import type { EventOptions, EventRecorder } from './recorder.ts';

export interface RecordedEvent {
  regarding: KubeObject;
  type: EventType;
  reason: string;
  action: string;
  note: string;
  options: EventOptions;
}

/** Keeps events in memory, for unit tests of controllers that record events. */
export class MemoryEventRecorder implements EventRecorder {
  readonly events: RecordedEvent[] = [];

  event(
    regarding: KubeObject,
    type: EventType,
    reason: string,
    action: string,
    note: string,
    options: EventOptions = {},
  ): void {
    this.events.push({ regarding, type, reason, action, note, options });
  }

  /** Reasons in recording order, the usual thing to assert on. */
  reasons(): string[] {
    return this.events.map((event) => event.reason);
  }

  clear(): void {
    this.events.length = 0;
  }
}
