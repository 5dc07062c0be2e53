export type { EventType } from './event-object.ts';
export {
  ApiEventRecorder,
  type ApiEventRecorderOptions,
  type EventRecorder,
  eventsFor,
  type ObjectEventRecorder,
} from './recorder.ts';
