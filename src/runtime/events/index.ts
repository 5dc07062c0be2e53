export {
  aggregationKey,
  continuesSeries,
  DEFAULT_MAX_SERIES,
  DEFAULT_SERIES_WINDOW_MS,
  EventAggregator,
  type EventAggregatorOptions,
  type EventSeriesState,
  referenceKey,
} from './aggregation.ts';
export {
  buildEvent,
  type EventIdentity,
  type EventOccurrence,
  type EventSeries,
  type EventsV1Event,
  type EventType,
  eventName,
  eventNamespace,
  microTime,
  NOTE_MAX_BYTES,
  objectReference,
  occurrenceProblems,
  REASON_MAX_LENGTH,
  randomEventSuffix,
  type SeriesTiming,
  seriesPatch,
  truncateNote,
} from './event-object.ts';
export { MemoryEventRecorder } from './memory-recorder.ts';
export {
  ApiEventRecorder,
  type ApiEventRecorderOptions,
  DEFAULT_EVENT_LABELS,
  DEFAULT_REPORTING_CONTROLLER,
  type EventRecord,
  type EventRecorder,
  eventsFor,
  type ObjectEventRecorder,
} from './recorder.ts';
export {
  DEFAULT_SPAM_BURST,
  DEFAULT_SPAM_MAX_OBJECTS,
  DEFAULT_SPAM_REFILL_PER_SECOND,
  EventSpamFilter,
  type EventSpamFilterOptions,
} from './spam-filter.ts';
export { CoalescingWriteQueue, DEFAULT_MAX_QUEUED_WRITES, type WriteQueueOptions } from './write-queue.ts';
