import { randomBytes } from 'node:crypto';
import type { V1ObjectReference } from '@kubernetes/client-node';
import type { KubeObject } from '../client/object.ts';
import { apiVersionOf, type ResourceType } from '../client/resource.ts';
import { cutToBytes } from '../text-limits.ts';

/** Building events.k8s.io/v1 Event objects: pure functions, no I/O. */

export type EventType = 'Normal' | 'Warning';

export interface EventSeries {
  /** Occurrences so far, including the first (>= 2 whenever a series is present). */
  count: number;
  /** MicroTime of the latest occurrence. */
  lastObservedTime: string;
}

/** events.k8s.io/v1 Event as JSON. */
export interface EventsV1Event extends KubeObject {
  eventTime: string;
  series?: EventSeries;
  reportingController: string;
  reportingInstance: string;
  action: string;
  reason: string;
  regarding: V1ObjectReference;
  note?: string;
  type: EventType;
}

/** What the caller reports, resolved to the object reference and namespace the Event uses. */
export interface EventOccurrence {
  regarding: V1ObjectReference;
  type: EventType;
  reason: string;
  action: string;
  note: string;
}

/** The API server rejects longer notes (events.k8s.io/v1 validation counts bytes). */
export const NOTE_MAX_BYTES = 1024;
/** Limit of reason and action. */
export const REASON_MAX_LENGTH = 128;
const NAME_MAX_LENGTH = 253;

/** metav1.MicroTime's wire format: RFC 3339 in UTC with six fractional digits. */
export function microTime(time: Date): string {
  const iso = time.toISOString(); // 2024-05-01T12:00:00.123Z
  return `${iso.slice(0, 23)}000Z`;
}

/**
 * A reference to `obj` for `regarding`. List responses omit apiVersion and kind on their items, so
 * `type` may supply them.
 */
export function objectReference(obj: KubeObject, type?: ResourceType): V1ObjectReference {
  const reference: V1ObjectReference = {};
  const apiVersion = obj.apiVersion ?? (type && apiVersionOf(type));
  const kind = obj.kind ?? type?.kind;
  if (apiVersion) reference.apiVersion = apiVersion;
  if (kind) reference.kind = kind;
  if (obj.metadata?.namespace) reference.namespace = obj.metadata.namespace;
  if (obj.metadata?.name) reference.name = obj.metadata.name;
  if (obj.metadata?.uid) reference.uid = obj.metadata.uid;
  if (obj.metadata?.resourceVersion) reference.resourceVersion = obj.metadata.resourceVersion;
  return reference;
}

/** Events live with the object they are about; events about cluster-scoped objects go to `default`. */
export function eventNamespace(regarding: V1ObjectReference): string {
  return regarding.namespace || 'default';
}

/** 16 random hex digits: the unique part of an event name. */
export function randomEventSuffix(): string {
  return randomBytes(8).toString('hex');
}

/** `<regarding name>.<suffix>`, as client-go names events, with the prefix cut to keep a valid length. */
export function eventName(regarding: V1ObjectReference, suffix: string): string {
  const prefix = (regarding.name || 'event')
    .slice(0, NAME_MAX_LENGTH - suffix.length - 1)
    .replace(/[.-]+$/, '');
  return `${prefix || 'event'}.${suffix}`;
}

/** Problems that would make the API server reject an event; empty when fine. */
export function occurrenceProblems(occurrence: EventOccurrence): string[] {
  const problems: string[] = [];
  if (occurrence.type !== 'Normal' && occurrence.type !== 'Warning') {
    problems.push(`type ${JSON.stringify(occurrence.type)} is not Normal or Warning`);
  }
  if (!occurrence.reason || occurrence.reason.length > REASON_MAX_LENGTH) {
    problems.push(`reason must be 1-${REASON_MAX_LENGTH} characters`);
  }
  if (!occurrence.action || occurrence.action.length > REASON_MAX_LENGTH) {
    problems.push(`action must be 1-${REASON_MAX_LENGTH} characters`);
  }
  if (!occurrence.regarding.name) problems.push('the regarding object has no name');
  return problems;
}

export interface EventIdentity {
  name: string;
  reportingController: string;
  reportingInstance: string;
  labels?: Record<string, string>;
}

/** Counts and times of a series of identical occurrences (see aggregation.ts). */
export interface SeriesTiming {
  count: number;
  firstObserved: Date;
  lastObserved: Date;
}

/** The Event to create. A series is included once there is more than one occurrence. */
export function buildEvent(
  occurrence: EventOccurrence,
  identity: EventIdentity,
  timing: SeriesTiming,
): EventsV1Event {
  const event: EventsV1Event = {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: {
      name: identity.name,
      namespace: eventNamespace(occurrence.regarding),
      ...(identity.labels && { labels: { ...identity.labels } }),
    },
    eventTime: microTime(timing.firstObserved),
    reportingController: identity.reportingController,
    reportingInstance: identity.reportingInstance,
    action: occurrence.action,
    reason: occurrence.reason,
    regarding: occurrence.regarding,
    // The one place a note is cut: an API error's message may be far longer than an Event allows.
    note: cutToBytes(occurrence.note, NOTE_MAX_BYTES),
    type: occurrence.type,
  };
  if (timing.count > 1) event.series = seriesOf(timing);
  return event;
}

/** The merge patch that brings an existing Event's series up to `timing`. */
export function seriesPatch(timing: SeriesTiming): { series: EventSeries } {
  return { series: seriesOf(timing) };
}

function seriesOf(timing: SeriesTiming): EventSeries {
  return { count: timing.count, lastObservedTime: microTime(timing.lastObserved) };
}
