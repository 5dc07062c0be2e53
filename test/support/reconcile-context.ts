import type { ReconcileContext } from '../../src/runtime/controller/reconciler.ts';
import type { ObjectWithStatus, StatusOf } from '../../src/runtime/write/status.ts';
import type { StatusWriter } from '../../src/runtime/write/status-writer.ts';
import { testLogger } from './log.ts';

/** Keeps the statuses a reconciler hands over, in order, instead of writing them. */
export class RecordingStatusWriter<T extends ObjectWithStatus> implements StatusWriter<T> {
  readonly written: { namespace: string; name: string; uid: string | undefined; status: StatusOf<T> }[] = [];

  latest(obj: T): StatusOf<T> | undefined {
    return this.#lastFor(obj) ?? (obj.status as StatusOf<T> | undefined);
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
 * an earlier reconcile to go on from what it handed over, as the runtime's one writer per controller does.
 */
export function reconcileContext<T extends ObjectWithStatus>(
  signal: AbortSignal = new AbortController().signal,
  status: RecordingStatusWriter<T> = new RecordingStatusWriter<T>(),
): ReconcileContext<T> & { status: RecordingStatusWriter<T> } {
  return { log: testLogger(), reconcileId: 'test', signal, status };
}
