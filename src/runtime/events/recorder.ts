import { hostname } from 'node:os';
import { isAlreadyExists, isNotFound } from '../client/errors.ts';
import type { KubeClient } from '../client/kube-client.ts';
import type { KubeObject } from '../client/object.ts';
import { CoreTypes, type ResourceType } from '../client/resource.ts';
import { logger as componentLogger, errorMessage, type Logger } from '../log.ts';
import type { Clock } from '../queue/clock.ts';
import { type RetryOptions, retryOnTransient } from '../write/retry.ts';
import { EventAggregator, type EventSeriesState } from './aggregation.ts';
import {
  buildEvent,
  type EventOccurrence,
  type EventType,
  eventName,
  eventNamespace,
  objectReference,
  occurrenceProblems,
  randomEventSuffix,
  type SeriesTiming,
  seriesPatch,
} from './event-object.ts';
import { EventSpamFilter, type EventSpamFilterOptions } from './spam-filter.ts';
import { CoalescingWriteQueue } from './write-queue.ts';

/** One thing that happened, as a controller reports it. */
export interface EventRecord {
  /** The object the event is about. */
  regarding: KubeObject;
  /** Supplies apiVersion/kind when `regarding` lacks them (objects from list responses do). */
  regardingType?: ResourceType;
  type: EventType;
  /** Why, in CamelCase, e.g. `SuccessfulCreate`. */
  reason: string;
  /** What was done (or failed), e.g. `Create`. */
  action: string;
  /** For humans. */
  note: string;
  /** The controller reporting it, for the recorder's own logs. */
  controller?: string;
}

/** What the manager shares between controllers: fire-and-forget, never throws. */
export interface EventRecorder {
  record(event: EventRecord): void;
}

type Occurrence = Pick<EventRecord, 'reason' | 'action' | 'note'>;

/** The events one controller reports about objects of one kind (its reconcilers hold this). */
export interface ObjectEventRecorder<T extends KubeObject> {
  normal(regarding: T, event: Occurrence): void;
  warning(regarding: T, event: Occurrence): void;
  record(regarding: T, event: Occurrence & { type: EventType }): void;
}

/** Binds `recorder` to a controller and the kind it reports on. */
export function eventsFor<T extends KubeObject>(
  recorder: EventRecorder,
  controller: string,
  regardingType: ResourceType<T>,
): ObjectEventRecorder<T> {
  const record = (regarding: T, event: Occurrence & { type: EventType }) =>
    recorder.record({ ...event, regarding, regardingType, controller });
  return {
    record,
    normal: (regarding, event) => record(regarding, { ...event, type: 'Normal' }),
    warning: (regarding, event) => record(regarding, { ...event, type: 'Warning' }),
  };
}

export const DEFAULT_REPORTING_CONTROLLER = 'basic-operator';

/**
 * An Event reports a write its controller has just made (a set scaled, a pod created), and the
 * owned object's controller reacts to that write at once: waiting this long lets its writes reach
 * the API server first instead of sharing it with the report. The same reason delays status reports
 * (DEFAULT_STATUS_BATCH_MS); Events are read by people, for whom 20 ms is nothing.
 */
export const DEFAULT_EVENT_WRITE_DELAY_MS = 20;
export const DEFAULT_EVENT_LABELS: Readonly<Record<string, string>> = {};

export interface ApiEventRecorderOptions {
  client: KubeClient;
  /** The manager's pod name. Default: $POD_NAME, else the host name (which is the pod name in a pod). */
  reportingInstance?: string;
  /** Default: basic-operator. */
  reportingController?: string;
  /** Labels put on every Event (the program's, e.g. its managed-by label). Default: none. */
  labels?: Record<string, string>;
  /** How long a series stays open after its latest occurrence. Default 10 minutes. */
  seriesWindowMs?: number;
  spamFilter?: Omit<EventSpamFilterOptions, 'clock'>;
  /** Events waiting to be written at most; more are dropped. Default 1000. */
  maxQueued?: number;
  /** How long an Event waits before it is written. Default DEFAULT_EVENT_WRITE_DELAY_MS. */
  writeDelayMs?: number;
  /** Retries of a write failing with a transient error. */
  retry?: RetryOptions;
  clock?: Clock;
  wallClock?: () => Date;
  /** Unique part of event names. Default: 16 random hex digits. */
  nameSuffix?: () => string;
  log?: Logger;
}

/**
 * Records events.k8s.io/v1 Events through the API server, like client-go's events broadcaster:
 * - a spam filter per regarding object drops events beyond a burst of 25, refilled one per 5 minutes;
 * - repeats of the same (object, reason, action, type, note) within the series window update one
 *   Event's `series` {count, lastObservedTime} with a merge patch instead of creating Events;
 * - writes happen in the background, one at a time, in a bounded queue, each a moment after its
 *   occurrence (DEFAULT_EVENT_WRITE_DELAY_MS), and a burst of repeats coalesces into one write.
 *   event() never blocks and never throws; failures are logged at debug level, because an event is
 *   worth less than the reconcile that reports it.
 */
export class ApiEventRecorder implements EventRecorder {
  readonly #client: KubeClient;
  readonly #reportingController: string;
  readonly #reportingInstance: string;
  readonly #labels: Record<string, string>;
  readonly #retry: RetryOptions;
  readonly #nameSuffix: () => string;
  readonly #log: Logger;
  readonly #spamFilter: EventSpamFilter;
  readonly #aggregator: EventAggregator;
  readonly #queue: CoalescingWriteQueue<EventSeriesState>;

  constructor(options: ApiEventRecorderOptions) {
    this.#client = options.client;
    this.#reportingController = options.reportingController ?? DEFAULT_REPORTING_CONTROLLER;
    this.#reportingInstance = options.reportingInstance ?? process.env.POD_NAME ?? hostname();
    this.#labels = { ...(options.labels ?? DEFAULT_EVENT_LABELS) };
    this.#retry = options.retry ?? {};
    this.#nameSuffix = options.nameSuffix ?? randomEventSuffix;
    this.#log = options.log ?? componentLogger({ component: 'event-recorder' });
    this.#spamFilter = new EventSpamFilter({ ...options.spamFilter, clock: options.clock });
    this.#aggregator = new EventAggregator({
      windowMs: options.seriesWindowMs,
      clock: options.clock,
      wallClock: options.wallClock,
    });
    this.#queue = new CoalescingWriteQueue({
      write: (series) => this.#write(series),
      onError: (err, series) =>
        this.#log.debug('failed to write event', { ...describe(series), error: errorMessage(err) }),
      maxQueued: options.maxQueued,
      delayMs: options.writeDelayMs ?? DEFAULT_EVENT_WRITE_DELAY_MS,
      clock: options.clock,
    });
  }

  record(event: EventRecord): void {
    const { reason, action, controller } = event;
    try {
      const occurrence: EventOccurrence = {
        regarding: objectReference(event.regarding, event.regardingType),
        type: event.type,
        reason,
        action,
        note: event.note,
      };
      const problems = occurrenceProblems(occurrence);
      if (problems.length > 0) {
        this.#log.warn('dropping invalid event', { controller, reason, action, problems });
        return;
      }
      if (!this.#spamFilter.allow(occurrence.regarding)) {
        this.#log.debug('dropping event: too many for this object', {
          controller,
          reason,
          action,
          regarding: occurrence.regarding,
        });
        return;
      }
      const { series } = this.#aggregator.observe(occurrence);
      if (!this.#queue.enqueue(series.key, series)) {
        this.#log.debug('dropping event: write queue full', describe(series));
      }
    } catch (err) {
      this.#log.debug('failed to record event', { controller, reason, action, error: errorMessage(err) });
    }
  }

  /** Resolves when every event recorded so far has been written (or given up on). */
  drain(): Promise<void> {
    return this.#queue.drain();
  }

  async #write(series: EventSeriesState): Promise<void> {
    if (series.eventName !== undefined && series.count <= series.writtenCount) return;
    // Later occurrences may arrive while this write is in flight; the queue then writes again.
    const timing: SeriesTiming = {
      count: series.count,
      firstObserved: series.firstObserved,
      lastObserved: series.lastObserved,
    };
    if (series.eventName === undefined) {
      await this.#create(series, timing);
      return;
    }
    try {
      const namespace = eventNamespace(series.occurrence.regarding);
      const name = series.eventName;
      await retryOnTransient(
        () =>
          this.#client.patch(CoreTypes.Event, {
            namespace,
            name,
            patchType: 'merge',
            body: seriesPatch(timing),
          }),
        this.#retry,
      );
      series.writtenCount = timing.count;
    } catch (err) {
      if (!isNotFound(err)) throw err;
      // The API server deletes Events after its event TTL (1 hour by default): start a new one.
      series.eventName = undefined;
      await this.#create(series, timing);
    }
  }

  async #create(series: EventSeriesState, timing: SeriesTiming): Promise<void> {
    const identity = {
      reportingController: this.#reportingController,
      reportingInstance: this.#reportingInstance,
      labels: this.#labels,
    };
    // A second attempt with a fresh name covers the (unlikely) clash of random names.
    for (let attempt = 1; ; attempt++) {
      const name = eventName(series.occurrence.regarding, this.#nameSuffix());
      const event = buildEvent(series.occurrence, { ...identity, name }, timing);
      try {
        await retryOnTransient(() => this.#client.create(CoreTypes.Event, event), this.#retry);
        series.eventName = name;
        series.writtenCount = timing.count;
        return;
      } catch (err) {
        if (attempt >= 2 || !isAlreadyExists(err)) throw err;
      }
    }
  }
}

function describe(series: EventSeriesState): Record<string, unknown> {
  const { regarding, reason, action, type } = series.occurrence;
  return { regarding, reason, action, type, count: series.count, event: series.eventName };
}
