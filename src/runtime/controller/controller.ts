import { randomUUID } from 'node:crypto';
import type { Registry } from 'prom-client';
import type { Informer } from '../cache/informer.ts';
import type { KubeObject } from '../client/object.ts';
import { errorMessage, type Logger } from '../log.ts';
import { controllerMetrics, RECONCILE_RESULTS, type ReconcileResult } from '../metrics.ts';
import { createPrometheusQueueMetrics, defaultControllerRateLimiter, WorkQueue } from '../queue/index.ts';
import type { ObjectWithStatus } from '../write/status.ts';
import type { CachedObjects, StatusWriter } from '../write/status-writer.ts';
import type { Predicate } from './predicates.ts';
import { keyToRequest, type Reconciler, type Request, requestKey, TerminalError } from './reconciler.ts';
import { dispatch, enqueueIf, type MapFunc, type Watch } from './watch.ts';

export interface ControllerOptions<T extends ObjectWithStatus = ObjectWithStatus> {
  name: string;
  concurrency: number;
  /** How long stop() waits for in-flight reconciles and then the stop hooks, in all (default 30 s). */
  drainTimeoutMs?: number;
  /** The cache of the reconciled type: a reconcile's `ctx.object` comes from it. */
  objects?: CachedObjects<T>;
}

/** What the manager starts and stops. */
export interface RunnableController {
  readonly name: string;
  start(): void;
  stop(options?: { abortInFlight?: boolean }): Promise<void>;
}

/** Errors that mean the code is wrong rather than the world: Go would have panicked. */
function isPanic(err: unknown): boolean {
  return (
    err instanceof TypeError ||
    err instanceof RangeError ||
    err instanceof ReferenceError ||
    err instanceof SyntaxError
  );
}

/**
 * The worker loop (controller-runtime's internal/controller): a de-duplicating rate-limited queue
 * of keys and N workers; one key is never reconciled by two workers at once.
 */
export class Controller<T extends ObjectWithStatus = ObjectWithStatus> implements RunnableController {
  readonly name: string;
  readonly queue: WorkQueue<string>;
  private readonly reconciler: Reconciler<T>;
  private status: StatusWriter<T> | undefined;
  private readonly noStatus: StatusWriter<T>;
  private readonly objects: CachedObjects<T> | undefined;
  private readonly concurrency: number;
  private readonly drainTimeoutMs: number;
  private readonly log: Logger;
  private readonly metrics;
  /** Namespaces with series in basic_operator_reconciles_total for this controller. */
  private readonly countedNamespaces = new Set<string>();
  private readonly stopController = new AbortController();
  private workers: Promise<void>[] = [];
  private startHooks: Array<() => void> = [];
  private stopHooks: Array<() => Promise<void>> = [];

  constructor(options: ControllerOptions<T>, reconciler: Reconciler<T>, registry: Registry, log: Logger) {
    if (!Number.isInteger(options.concurrency) || options.concurrency < 1) {
      throw new Error(
        `controller ${options.name}: concurrency must be a whole number >= 1, got ${options.concurrency}`,
      );
    }
    this.name = options.name;
    this.reconciler = reconciler;
    this.noStatus = noStatusWriter(options.name);
    this.objects = options.objects;
    this.concurrency = options.concurrency;
    this.drainTimeoutMs = options.drainTimeoutMs ?? 30_000;
    this.log = log.child({ controller: options.name });
    this.metrics = controllerMetrics(registry);
    this.queue = new WorkQueue<string>({
      rateLimiter: defaultControllerRateLimiter<string>(),
      metrics: createPrometheusQueueMetrics<string>(registry, options.name),
    });
    this.metrics.maxConcurrentReconciles.set({ controller: this.name }, this.concurrency);
    this.metrics.activeWorkers.set({ controller: this.name }, 0);
    for (const result of RECONCILE_RESULTS) {
      this.metrics.reconcileTotal.inc({ controller: this.name, result }, 0);
    }
    this.metrics.reconcileErrors.inc({ controller: this.name }, 0);
    this.metrics.terminalReconcileErrors.inc({ controller: this.name }, 0);
    this.metrics.reconcilePanics.inc({ controller: this.name }, 0);
  }

  /** Called by the builder: wiring of event sources, run when the controller starts. */
  onStart(hook: () => void): void {
    this.startHooks.push(hook);
  }

  /** What reconciles write status through (ctx.status); without one, ctx.status throws. */
  useStatusWriter(writer: StatusWriter<T>): void {
    this.status = writer;
  }

  /** Aborted when the controller stops taking work for good (after the drain, or at once on lost leadership). */
  get signal(): AbortSignal {
    return this.stopController.signal;
  }

  /**
   * Work a reconcile handed over without waiting (background status writes): run once the workers
   * have drained and before in-flight work is aborted, within the same drain timeout.
   */
  onStop(hook: () => Promise<void>): void {
    this.stopHooks.push(hook);
  }

  /** Reconcile `key` again after its backoff, as if a reconcile had failed (e.g. its status write did). */
  retryKey(key: string): void {
    this.queue.addRateLimited(key);
  }

  enqueue(request: Request): void {
    this.queue.add(requestKey(request));
  }

  /**
   * Adds an event source at any time, before or after start (controller-runtime's Controller.Watch
   * on a running controller): for kinds a reconciler learns about only at run time. Events of
   * `informer` that pass the predicates enqueue what `map` returns, from the moment the controller
   * runs; what the informer holds already counts as added, as for the builder's watches.
   */
  watch<U extends KubeObject>(informer: Informer<U>, map: MapFunc<U>, ...predicates: Predicate<U>[]): void {
    const watch: Watch<U> = { map, predicates };
    const running = () => this.workers.length > 0;
    if (!running()) {
      this.onStart(() => {
        for (const obj of informer.list()) enqueueIf(this, watch, obj, (p) => p.create?.(obj));
      });
    }
    // A handler added to a synced informer is told about every cached object at once.
    informer.addHandler(dispatch<U>([], () => (running() ? [watch] : []), this));
  }

  start(): void {
    if (this.workers.length > 0) return;
    for (const hook of this.startHooks) hook();
    this.log.info('starting workers', { workers: this.concurrency });
    for (let i = 0; i < this.concurrency; i++) this.workers.push(this.worker());
  }

  /** Stops taking work; waits (bounded) for in-flight reconciles. `abortInFlight` also cancels them. */
  async stop(options: { abortInFlight?: boolean } = {}): Promise<void> {
    if (options.abortInFlight) this.stopController.abort();
    const started = Date.now();
    const budget = options.abortInFlight ? 0 : this.drainTimeoutMs;
    const drained = await this.queue.shutDownWithDrain(budget);
    if (!drained) this.log.warn('shutdown: in-flight reconciles did not finish in time');
    if (this.stopHooks.length > 0 && !this.stopController.signal.aborted) {
      const left = Math.max(0, budget - (Date.now() - started));
      const hooksDone = await Promise.race([
        Promise.all(this.stopHooks.map((hook) => hook().catch(() => undefined))).then(() => true),
        new Promise<false>((r) => setTimeout(() => r(false), left).unref()),
      ]);
      if (!hooksDone) this.log.warn('shutdown: stop hooks did not finish in time');
    }
    this.stopController.abort();
    await Promise.race([Promise.all(this.workers), new Promise((r) => setTimeout(r, 1000).unref())]);
    this.log.info('stopped');
  }

  private async worker(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      this.metrics.activeWorkers.inc({ controller: this.name });
      try {
        await this.reconcileKey(key);
      } finally {
        this.metrics.activeWorkers.dec({ controller: this.name });
        this.queue.done(key);
      }
    }
  }

  /** The cached object of `request`, with the status last handed over merged in (ctx.object). */
  private objectOf(request: Request): T | undefined {
    const cached = this.objects?.get(request.namespace, request.name);
    if (!cached || !this.status) return cached;
    return Object.freeze({ ...cached, status: this.status.latest(cached) });
  }

  private async reconcileKey(key: string): Promise<void> {
    const request = keyToRequest(key);
    const reconcileId = randomUUID();
    const log = this.log.child({
      namespace: request.namespace,
      name: request.name,
      reconcileID: reconcileId,
    });
    const labels = { controller: this.name };
    const endTimer = this.metrics.reconcileTime.startTimer(labels);
    try {
      const result = await this.reconciler.reconcile(request, {
        object: this.objectOf(request),
        log,
        reconcileId,
        signal: this.stopController.signal,
        status: this.status ?? this.noStatus,
      });
      if (result?.requeueAfterMs !== undefined && result.requeueAfterMs > 0) {
        this.queue.forget(key);
        this.queue.addAfter(key, result.requeueAfterMs);
        this.countReconcile(request.namespace, 'requeue_after');
      } else if (result?.requeue) {
        this.queue.addRateLimited(key);
        this.countReconcile(request.namespace, 'requeue');
      } else {
        this.queue.forget(key);
        this.countReconcile(request.namespace, 'success');
      }
    } catch (err) {
      this.metrics.reconcileErrors.inc(labels);
      this.countReconcile(request.namespace, 'error');
      if (err instanceof TerminalError) {
        this.metrics.terminalReconcileErrors.inc(labels);
        this.queue.forget(key);
        log.error('reconcile failed permanently', { error: errorMessage(err) });
      } else {
        if (isPanic(err)) {
          this.metrics.reconcilePanics.inc(labels);
          log.error('reconcile panicked', {
            error: errorMessage(err),
            stack: err instanceof Error ? err.stack : undefined,
          });
        } else if (!this.stopController.signal.aborted) {
          log.warn('reconcile failed, will retry', {
            error: errorMessage(err),
            retries: this.queue.numRequeues(key),
          });
        }
        this.queue.addRateLimited(key);
      }
    } finally {
      endTimer();
    }
  }

  /** A finished reconcile, in reconcile_total and by the object's namespace in basic_operator_reconciles_total. */
  private countReconcile(namespace: string, result: ReconcileResult): void {
    this.metrics.reconcileTotal.inc({ controller: this.name, result });
    const labels = { controller: this.name, object_namespace: namespace };
    if (!this.countedNamespaces.has(namespace)) {
      // Every result from a namespace's first reconcile on, as reconcile_total's from the start: an
      // error ratio reads 0 there, not "no data".
      this.countedNamespaces.add(namespace);
      for (const other of RECONCILE_RESULTS)
        this.metrics.reconcilesByNamespace.inc({ ...labels, result: other }, 0);
    }
    this.metrics.reconcilesByNamespace.inc({ ...labels, result });
  }
}

function noStatusWriter<T extends ObjectWithStatus>(controller: string): StatusWriter<T> {
  const fail = (): never => {
    throw new Error(`controller ${controller} writes no status: set it up with .status() in its builder`);
  };
  return { latest: fail, write: fail, flush: fail };
}
