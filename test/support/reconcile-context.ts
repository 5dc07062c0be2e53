import type { ReconcileContext } from '../../src/runtime/controller/reconciler.ts';
import type { ObjectWithStatus, StatusOf } from '../../src/runtime/write/status.ts';
import { applyOwnedFields, replaceWholeStatus } from '../../src/runtime/write/status-strategy.ts';
import type { StatusWriter } from '../../src/runtime/write/status-writer.ts';
import { testLogger } from './log.ts';

/**
 * Keeps the statuses a reconciler hands over, in order, instead of writing them. `latest()` lays the
 * last one over the cached status as the runtime's writer of the builder's strategy does: in its
 * place (`replace`, the default), or field by field and condition by condition (`apply`).
 */
export class RecordingStatusWriter<T extends ObjectWithStatus> implements StatusWriter<T> {
  readonly written: { namespace: string; name: string; uid: string | undefined; status: StatusOf<T> }[] = [];
  readonly #strategy;

  constructor(strategy: 'replace' | 'apply' = 'replace') {
    this.#strategy = strategy === 'apply' ? applyOwnedFields('test') : replaceWholeStatus;
  }

  latest(obj: T): StatusOf<T> | undefined {
    const last = this.#lastFor(obj);
    if (last === undefined) return obj.status as StatusOf<T> | undefined;
    return this.#strategy.overlay(obj.status, last) as StatusOf<T>;
  }

  write(obj: T, status: StatusOf<T>): void {
    this.written.push({
      namespace: obj.metadata?.namespace ?? '',
      name: obj.metadata?.name ?? '',
      uid: obj.metadata?.uid,
      status: structuredClone(status),
    });
  }

  /** Names of the objects flushed, in order, with the number of statuses handed over by then. */
  readonly flushed: { name: string; written: number }[] = [];

  async flush(obj: T): Promise<void> {
    this.flushed.push({ name: obj.metadata?.name ?? '', written: this.written.length });
  }

  /** The status last handed over for the object named `name`. */
  last(name: string): StatusOf<T> | undefined {
    return this.written.findLast((w) => w.name === name)?.status;
  }

  #lastFor(obj: T): StatusOf<T> | undefined {
    return this.written.findLast(
      (w) =>
        w.name === obj.metadata?.name &&
        w.namespace === (obj.metadata?.namespace ?? '') &&
        w.uid === obj.metadata?.uid,
    )?.status;
  }
}

/**
 * A ReconcileContext for calling a reconciler directly; its statuses are recorded. Pass the writer of
 * an earlier reconcile to go on from what it handed over, as the runtime's one writer per controller
 * does, and the cached object: `ctx.object` is it with that writer's latest status, as the runtime
 * hands it over.
 */
export function reconcileContext<T extends ObjectWithStatus>(
  signal: AbortSignal = new AbortController().signal,
  status: RecordingStatusWriter<T> = new RecordingStatusWriter<T>(),
  cached?: T,
): ReconcileContext<T> & { status: RecordingStatusWriter<T> } {
  const object = cached && Object.freeze({ ...cached, status: status.latest(cached) });
  return { object, log: testLogger(), reconcileId: 'test', signal, status };
}
