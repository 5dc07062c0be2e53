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
/**
 * The kube-apiserver's whole answer when a JSON Patch cannot be applied (a `test` that does not hold,
 * a path that does not exist): 422 Invalid with this generic message and empty details. It drops the
 * patch library's own error text (NewGenericServerResponse in its jsonPatcher), so a failed `test`
 * cannot be told apart from a patch that addresses a missing path.
 */
export const PATCH_NOT_APPLICABLE_MESSAGE = 'the server rejected our request due to an error in our request';

function hasCauses(details: unknown): boolean {
  const causes = (details as { causes?: unknown } | null | undefined)?.causes;
  return Array.isArray(causes) && causes.length > 0;
}

/**
 * A JSON Patch that did not apply to the stored object: for patches whose `test` operations guard
 * every assumption (see write/guarded-patch.ts), the object changed under us. A 422 that names the
 * invalid fields (schema or validation failure of the patched object) is not one.
 */
export const isPatchTestFailed = (err: unknown): boolean =>
  err instanceof ApiError &&
  ((err.statusCode === 422 &&
    err.reason === 'Invalid' &&
    !hasCauses(err.details) &&
    err.message.endsWith(PATCH_NOT_APPLICABLE_MESSAGE)) ||
    // Other API servers (and old ones) pass the patch library's message through.
    ((err.statusCode === 422 || err.statusCode === 500) &&
      /test operation|testing value/i.test(err.message)));

/** Errors worth retrying later: server-side throttling, timeouts, unavailability, network failures. */
export function isTransient(err: unknown): boolean {
  const code = statusOf(err);
  if (code === undefined) return !(err instanceof ApiError);
  return code === 429 || code === 500 || code === 502 || code === 503 || code === 504;
}

/**
 * The namespace is being deleted, so nothing can be created in it (403 with the cause
 * NamespaceTerminating, upstream v1.NamespaceTerminatingCause).
 */
export function isNamespaceTerminating(err: unknown): boolean {
  if (!(err instanceof ApiError)) return false;
  // metav1.StatusCause's Type is serialized as "reason".
  const causes = (err.details as { causes?: Array<{ reason?: string }> } | null | undefined)?.causes;
  return Array.isArray(causes) && causes.some((cause) => cause?.reason === 'NamespaceTerminating');
}
