/** A failed API call, carrying the HTTP status and the metav1.Status reason the server gave. */
export class ApiError extends Error {
  readonly statusCode: number;
  readonly reason: string;
  readonly details: unknown;

  constructor(statusCode: number, reason: string, message: string, details?: unknown) {
    super(message);
    this.name = 'ApiError';
    this.statusCode = statusCode;
    this.reason = reason;
    this.details = details;
  }
}

function statusOf(err: unknown): number | undefined {
  return err instanceof ApiError ? err.statusCode : undefined;
}

export const isNotFound = (err: unknown): boolean => statusOf(err) === 404;
export const isConflict = (err: unknown): boolean => statusOf(err) === 409 && !isAlreadyExists(err);
export const isAlreadyExists = (err: unknown): boolean =>
  err instanceof ApiError && err.statusCode === 409 && err.reason === 'AlreadyExists';
export const isGone = (err: unknown): boolean => statusOf(err) === 410;
export const isForbidden = (err: unknown): boolean => statusOf(err) === 403;
export const isInvalid = (err: unknown): boolean => statusOf(err) === 422;
/** A JSON Patch `test` operation that did not hold: the object changed under us. */
export const isPatchTestFailed = (err: unknown): boolean =>
  err instanceof ApiError &&
  (err.statusCode === 422 || err.statusCode === 500) &&
  /test operation/i.test(err.message);

/** Errors worth retrying later: server-side throttling, timeouts, unavailability, network failures. */
export function isTransient(err: unknown): boolean {
  const code = statusOf(err);
  if (code === undefined) return !(err instanceof ApiError);
  return code === 429 || code === 500 || code === 502 || code === 503 || code === 504;
}
