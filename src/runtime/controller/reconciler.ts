import type { Logger } from '../log.ts';

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

export interface ReconcileContext {
  log: Logger;
  reconcileId: string;
  /** Aborted when the controller stops (shutdown or lost leadership). */
  signal: AbortSignal;
}

export interface Reconciler {
  reconcile(request: Request, context: ReconcileContext): Promise<Result | undefined>;
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
