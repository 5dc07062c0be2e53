/**
 * A point in time as it reaches the controller: a `Date` (typed client objects), an RFC 3339
 * string (raw JSON from the API server) or epoch milliseconds (tests, clocks).
 */
export type Timestamp = Date | string | number;

/** Epoch milliseconds of a timestamp, or undefined when it is absent or unparsable (Go's zero time). */
export function toMillis(value: Timestamp | null | undefined): number | undefined {
  if (value === undefined || value === null) return undefined;
  let millis: number;
  if (value instanceof Date) millis = value.getTime();
  else if (typeof value === 'number') millis = value;
  else millis = Date.parse(value);
  return Number.isNaN(millis) ? undefined : millis;
}
