export type { EventsV1Event, EventType } from './event-object.ts';
export { MemoryEventRecorder } from './memory-recorder.ts';
export {
  ApiEventRecorder,
  type ApiEventRecorderOptions,
  type EventRecorder,
  eventsFor,
  type ObjectEventRecorder,
} from './recorder.ts';
