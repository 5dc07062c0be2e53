import type { Logger } from '../log.ts';
import type { ObjectWithStatus } from '../write/status.ts';
import type { StatusWriter } from '../write/status-writer.ts';

/** What a reconcile is about: one object, by namespace and name (its current state is read from the cache). */
export interface Request {
  namespace: string;
  name: string;
}

export interface Result {
  /** Reconcile again after this delay, even if nothing changes (e.g. a pod becomes available later). */
  requeueAfterMs?: number;
  /** Reconcile again soon, with the per-item backoff. */
  requeue?: boolean;
}

export interface ReconcileContext<T extends ObjectWithStatus = ObjectWithStatus> {
  /**
   * The object of the request as the cache has it when the reconcile starts, with the status this
   * controller last handed over on `status` merged in (`status.latest()`: the cache lags the
   * controller's own status writes); undefined when the cache has no object of that name.
   */
  object: T | undefined;
  log: Logger;
  reconcileId: string;
  /** Aborted when the controller stops (shutdown or lost leadership). */
  signal: AbortSignal;
  /** Where the status of the reconciled object goes (set up by the builder's `.status()`). */
  status: StatusWriter<T>;
}

export interface Reconciler<T extends ObjectWithStatus = ObjectWithStatus> {
  reconcile(request: Request, context: ReconcileContext<T>): Promise<Result | undefined>;
}

/** An error retrying cannot fix (bad input): logged and counted, not requeued. */
export class TerminalError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'TerminalError';
  }
}

export function requestKey(request: Request): string {
  return request.namespace ? `${request.namespace}/${request.name}` : request.name;
}

export function keyToRequest(key: string): Request {
  const slash = key.indexOf('/');
  return slash < 0
    ? { namespace: '', name: key }
    : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}
