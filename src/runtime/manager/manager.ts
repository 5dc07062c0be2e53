import type { Server } from 'node:http';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { type CacheOptions, InformerCache } from '../cache/informer-cache.ts';
import type { ClusterAccess } from '../client/cluster-access.ts';
import { KubeClient } from '../client/kube-client.ts';
import { registerThrottleWaiting, requestObserver } from '../client/metrics.ts';
import type { KubeObject } from '../client/object.ts';
import { PriorityThrottle } from '../client/priority-throttle.ts';
import type { ResourceType } from '../client/resource.ts';
import { type ControllerHost, namedController } from '../controller/builder.ts';
import type { RunnableController } from '../controller/controller.ts';
import {
  ApiEventRecorder,
  type ApiEventRecorderOptions,
  type EventRecorder,
  eventsFor,
  type ObjectEventRecorder,
} from '../events/index.ts';
import { errorMessage, type Logger, rootLogger } from '../log.ts';
import { leaderElectionGauge } from '../metrics.ts';
import { TokenBucket } from '../queue/index.ts';
import type { ManagerConfig } from './config.ts';
import { healthServer, listen, metricsServer } from './http-servers.ts';
import { LeaderElector } from './leader-election.ts';
import { memoryBudget, reportMemoryBudget } from './memory-budget.ts';
import { apiAccessReviews, cachedAccessReviews } from './metrics/access-review.ts';
import { secureMetricsServer } from './metrics/secure-server.ts';
import { handoverReserveMs, ShutdownDeadline } from './shutdown-deadline.ts';

/** What the program around the manager decides (controller-runtime's manager.Options). */
export interface ManagerOptions {
  /** Which objects the shared cache holds by default, per type; controllers may ask for other selections. */
  cache?: CacheOptions;
  /** Who the Events say reported them, and the labels they carry. */
  events?: Pick<ApiEventRecorderOptions, 'reportingController' | 'labels'>;
  /**
   * The User-Agent of its requests (`<userAgent>/events` for Events, `<userAgent>/leader-election` for the Lease): the audit log tells processes
   * apart by it, and the least-privilege check counts only the operator's (e2e/support/least-privilege.ts).
   * Default `basic-operator`; another program built on the runtime names itself.
   */
  userAgent?: string;
}

export class ClusterUnreachableError extends Error {}

/**
 * Runs every registered controller in one process: one shared cache, health and metrics endpoints,
 * leader election, and a graceful shutdown that finishes in-flight work and hands the lease over.
 */
export class Manager implements ControllerHost {
  readonly config: ManagerConfig;
  readonly client: KubeClient;
  readonly cache: InformerCache;
  readonly registry = new Registry();
  readonly log: Logger;
  readonly controllers: RunnableController[] = [];
  /** events.k8s.io/v1 Events, aggregated and rate limited; shared by every controller. */
  readonly events: EventRecorder;
  private readonly eventRecorder: ApiEventRecorder;
  /** The leader election's client: a budget of its own (see the constructor). */
  readonly leaseClient: KubeClient;
  private readonly stopSignal = new AbortController();
  private elector: LeaderElector | undefined;
  private servers: Server[] = [];
  private controllersRunning = false;
  readonly ports: { metrics?: number; health?: number } = {};

  /** `kubeConfig`: what loadKubeConfig(config.kubeconfig) returns, or a client-node KubeConfig. */
  constructor(config: ManagerConfig, kubeConfig: ClusterAccess, options: ManagerOptions = {}) {
    this.config = config;
    this.log = rootLogger(config.logLevel);
    const throttle =
      config.qps > 0 ? new PriorityThrottle(new TokenBucket(config.qps, config.burst)) : undefined;
    const host = new URL(kubeConfig.getCurrentCluster()?.server ?? 'https://unknown').host;
    const userAgent = options.userAgent ?? 'basic-operator';
    this.client = new KubeClient(kubeConfig, {
      throttle,
      userAgent,
      observer: requestObserver(this.registry, host),
    });
    if (throttle) registerThrottleWaiting(this.registry, throttle);
    this.cache = new InformerCache(this.client, this.log, {
      ...options.cache,
      namespaces: config.namespaces,
    });
    collectDefaultMetrics({ register: this.registry });
    reportMemoryBudget(memoryBudget(), this.log, this.registry);
    // Events get a client with a budget of their own, as kube-controller-manager's event broadcaster
    // does, so a burst of Events never slows the controllers' own writes.
    const eventThrottle = config.qps > 0 ? new TokenBucket(config.qps, config.burst) : undefined;
    const eventClient = new KubeClient(kubeConfig, {
      throttle: eventThrottle,
      userAgent: `${userAgent}/events`,
      observer: requestObserver(this.registry, host),
    });
    this.eventRecorder = new ApiEventRecorder({
      ...options.events,
      client: eventClient,
      log: this.log.child({ component: 'events' }),
    });
    this.events = this.eventRecorder;
    // The Lease too, as kube-controller-manager's leader-election client: a renewal never waits
    // behind the controllers' writes, which under a tight budget could outlast renewDeadline.
    this.leaseClient = new KubeClient(kubeConfig, {
      throttle: config.qps > 0 ? new TokenBucket(config.qps, config.burst) : undefined,
      userAgent: `${userAgent}/leader-election`,
      observer: requestObserver(this.registry, host),
    });
  }

  /** The recorder controller `controller` reports events about objects of `type` with. */
  eventsFor<T extends KubeObject>(controller: string, type: ResourceType<T>): ObjectEventRecorder<T> {
    return eventsFor(this.events, controller, type);
  }

  /** Starts registering a controller: `.controller(name).for(Type)...complete(reconciler)`. */
  controller(name: string) {
    return namedController(this, name);
  }

  addController(controller: RunnableController): void {
    if (this.controllers.some((c) => c.name === controller.name)) {
      throw new Error(`a controller named ${controller.name} is already registered`);
    }
    this.controllers.push(controller);
  }

  concurrencyFor(name: string): number {
    return this.config.concurrency[name.toLowerCase()] ?? this.config.defaultConcurrency;
  }

  /** The controllers' share of --graceful-shutdown-timeout; stop() needs the rest after them. */
  get drainTimeoutMs(): number {
    return this.config.gracefulShutdownMs - handoverReserveMs(this.config.gracefulShutdownMs);
  }

  get isLeader(): boolean {
    return this.controllersRunning;
  }

  /** Fails with a clear message when no API server answers. */
  async checkConnection(): Promise<string> {
    try {
      const version = await this.client.request<{ gitVersion: string }>('GET', '/version', {
        timeoutMs: 10_000,
      });
      return version.gitVersion;
    } catch (err) {
      throw new ClusterUnreachableError(
        `cannot reach the Kubernetes API server at ${this.client.server}: ${errorMessage(err)}. ` +
          'Check the kubeconfig (--kubeconfig or $KUBECONFIG) or bring a local cluster up with `npm run cluster:up`.',
      );
    }
  }

  /** Starts everything and resolves once running; use stop() (or SIGTERM via main) to end. */
  async start(): Promise<void> {
    const version = await this.checkConnection();
    this.log.info('connected to the API server', { server: this.client.server, version });
    await this.startServers();
    this.cache.start(this.stopSignal.signal);
    if (!this.config.leaderElection.enabled) {
      void this.startControllers();
      return;
    }
    const le = this.config.leaderElection;
    this.elector = new LeaderElector(
      this.leaseClient,
      {
        namespace: le.namespace,
        name: le.id,
        identity: le.identity,
        leaseDurationMs: le.leaseDurationMs,
        renewDeadlineMs: le.renewDeadlineMs,
        retryPeriodMs: le.retryPeriodMs,
      },
      this.log,
      leaderElectionGauge(this.registry),
    );
    void this.elector.run(this.stopSignal.signal, {
      onStartedLeading: () => void this.startControllers(),
      onStoppedLeading: () => void this.onLostLease(),
    });
  }

  private async startControllers(): Promise<void> {
    if (this.stopSignal.signal.aborted) return;
    await this.cache.waitForSync();
    if (this.stopSignal.signal.aborted) return;
    this.log.info('caches synced, starting controllers', {
      controllers: this.controllers.map((c) => c.name),
    });
    this.controllersRunning = true;
    for (const controller of this.controllers) controller.start();
  }

  private async onLostLease(): Promise<void> {
    // Stop reconciling at once: another replica may already be acting on the same objects.
    this.controllersRunning = false;
    await Promise.all(this.controllers.map((c) => c.stop({ abortInFlight: true })));
    if (this.config.exitOnLostLease) {
      this.log.error('leader lease lost; exiting so the process restarts clean');
      process.exit(1);
    }
  }

  /**
   * Graceful stop within --graceful-shutdown-timeout: no new work, in-flight reconciles (and the
   * controllers' stop hooks) get drainTimeoutMs, then the lease is released, recorded Events are
   * written, caches and servers stop, each with what is left of the timeout.
   */
  async stop(): Promise<void> {
    if (this.stopSignal.signal.aborted) return;
    this.log.info('shutting down');
    const deadline = new ShutdownDeadline(this.config.gracefulShutdownMs, this.log);
    const wasRunning = this.controllersRunning;
    this.controllersRunning = false;
    if (wasRunning) await deadline.wait('controllers', Promise.all(this.controllers.map((c) => c.stop())));
    await deadline.wait('lease release', this.elector?.release() ?? Promise.resolve());
    await deadline.wait('events', this.eventRecorder.drain());
    this.stopSignal.abort();
    await deadline.wait('caches', this.cache.stopped());
    const closed = this.servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve())));
    if (!(await deadline.wait('http servers', Promise.all(closed)))) {
      for (const server of this.servers) server.closeAllConnections();
    }
    this.servers = [];
    this.log.info('stopped');
  }

  private async startServers(): Promise<void> {
    if (this.config.healthProbeBindAddress !== '0') {
      const server = healthServer({
        healthz: () => ({ ok: true }),
        readyz: () => {
          const unsynced = this.cache.unsynced();
          return unsynced.length === 0
            ? { ok: true }
            : { ok: false, detail: `caches not synced: ${unsynced.join(', ')}` };
        },
      });
      this.ports.health = await listen(server, this.config.healthProbeBindAddress);
      this.servers.push(server);
    }
    if (this.config.metricsBindAddress !== '0') {
      const { secure, certPath, certName, certKey } = this.config.metrics;
      const server = secure
        ? secureMetricsServer({
            registry: this.registry,
            reviews: cachedAccessReviews(apiAccessReviews(this.client)),
            certFiles: certPath ? { dir: certPath, certName, keyName: certKey } : undefined,
            log: this.log.child({ component: 'metrics' }),
          })
        : metricsServer(this.registry);
      this.ports.metrics = await listen(server, this.config.metricsBindAddress);
      this.servers.push(server);
    }
    this.log.info('serving', {
      healthPort: this.ports.health,
      metricsPort: this.ports.metrics,
      metricsSecure: this.config.metrics.secure,
    });
  }
}
