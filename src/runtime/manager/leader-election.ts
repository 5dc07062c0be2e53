import type { V1Lease } from '@kubernetes/client-node';
import type { Gauge } from 'prom-client';
import { sleep } from '../cache/backoff.ts';
import { isAlreadyExists, isConflict, isNotFound } from '../client/errors.ts';
import type { KubeClient } from '../client/kube-client.ts';
import { CoreTypes } from '../client/resource.ts';
import { errorMessage, type Logger } from '../log.ts';

export interface LeaderElectionConfig {
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}

export interface LeaderCallbacks {
  onStartedLeading(): void;
  /** Called once when a held lease is lost (not on a voluntary release). */
  onStoppedLeading(): void;
}

/** Lease times are metav1.MicroTime: RFC 3339 with microseconds. */
function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/**
 * Lease-based leader election (client-go's LeaderElector with a coordination.k8s.io Lease):
 * candidates poll every retryPeriod; a lease is free when its holder is empty or when its record has
 * not changed for leaseDuration *as observed locally* (so clocks of different machines never matter);
 * the leader renews every retryPeriod and gives up when it could not renew for renewDeadline.
 */
export class LeaderElector {
  private readonly client: KubeClient;
  private readonly config: LeaderElectionConfig;
  private readonly log: Logger;
  private readonly gauge: Gauge<'name'> | undefined;
  private observedRecord = '';
  private observedAt = 0;
  private lastRenew = 0;
  private leading = false;
  private current: V1Lease | undefined;
  /** The renewal in progress, if any; release() waits for it so the two never race. */
  private renewal: Promise<boolean> | undefined;
  private releasing = false;

  constructor(client: KubeClient, config: LeaderElectionConfig, log: Logger, gauge?: Gauge<'name'>) {
    if (config.renewDeadlineMs >= config.leaseDurationMs) {
      throw new Error('leader election: the renew deadline must be shorter than the lease duration');
    }
    if (config.retryPeriodMs >= config.renewDeadlineMs) {
      throw new Error('leader election: the retry period must be shorter than the renew deadline');
    }
    this.client = client;
    this.config = config;
    this.log = log.child({
      component: 'leader-election',
      lease: `${config.namespace}/${config.name}`,
      identity: config.identity,
    });
    this.gauge = gauge;
    this.gauge?.set({ name: config.name }, 0);
  }

  /** Campaigns until leading, then renews until the signal aborts or the lease is lost. */
  async run(signal: AbortSignal, callbacks: LeaderCallbacks): Promise<void> {
    this.log.info('waiting to acquire the leader lease');
    while (!signal.aborted && !this.leading) {
      const acquired = await this.tryAcquireOrRenew();
      if (acquired) break;
      await sleep(this.nextPollDelay(), signal);
    }
    if (signal.aborted) return;
    this.leading = true;
    this.gauge?.set({ name: this.config.name }, 1);
    this.log.info('acquired the leader lease');
    callbacks.onStartedLeading();
    while (!signal.aborted) {
      await sleep(this.config.retryPeriodMs, signal);
      if (signal.aborted || this.releasing) break;
      this.renewal = this.tryAcquireOrRenew();
      const renewed = await this.renewal;
      this.renewal = undefined;
      if (this.releasing) break;
      if (renewed) continue;
      if (Date.now() - this.lastRenew >= this.config.renewDeadlineMs || !this.holdsCurrent()) {
        this.leading = false;
        this.gauge?.set({ name: this.config.name }, 0);
        this.log.error('lost the leader lease');
        callbacks.onStoppedLeading();
        return;
      }
    }
  }

  /** Gives the lease up at once so a standby takes over without waiting for expiry. */
  async release(): Promise<void> {
    if (!this.leading || !this.current) return;
    // A renewal in flight would either re-take the released lease or make our update conflict.
    this.releasing = true;
    await this.renewal;
    this.leading = false;
    this.gauge?.set({ name: this.config.name }, 0);
    const now = microTime(Date.now());
    const lease: V1Lease = {
      ...this.current,
      spec: {
        ...this.current.spec,
        holderIdentity: undefined,
        leaseDurationSeconds: 1,
        acquireTime: now as unknown as Date,
        renewTime: now as unknown as Date,
      },
    };
    try {
      await this.client.update(CoreTypes.Lease, lease, {
        signal: AbortSignal.timeout(this.config.renewDeadlineMs),
      });
      this.log.info('released the leader lease');
    } catch (err) {
      this.log.warn('could not release the leader lease', { error: errorMessage(err) });
    }
  }

  private holdsCurrent(): boolean {
    return this.current?.spec?.holderIdentity === this.config.identity;
  }

  /** A standby polls every retry period, but wakes right when the observed lease would expire. */
  private nextPollDelay(): number {
    const jittered = this.config.retryPeriodMs * (1 + 0.1 * Math.random());
    const holder = this.current?.spec?.holderIdentity;
    if (!holder) return jittered;
    const untilExpiry = this.observedAt + this.leaseDurationOf(this.current) - Date.now() + 50;
    return Math.max(50, Math.min(jittered, untilExpiry));
  }

  private leaseDurationOf(lease: V1Lease | undefined): number {
    return (lease?.spec?.leaseDurationSeconds ?? this.config.leaseDurationMs / 1000) * 1000;
  }

  /**
   * The leader's fast path (client-go's): while its lease is valid, the leader writes it again as it
   * last wrote it, with no read first, so a renewal is one request. Anyone else's write since makes
   * this update conflict, and the full path then reads the lease.
   */
  private async renewAsLastWritten(now: number, signal: AbortSignal): Promise<boolean> {
    const last = this.current;
    if (!this.leading || !last || !this.holdsCurrent()) return false;
    if (now - this.lastRenew >= this.leaseDurationOf(last)) return false;
    const renewed: V1Lease = {
      ...last,
      spec: { ...last.spec, renewTime: microTime(now) as unknown as Date },
    };
    try {
      this.current = await this.client.update<V1Lease>(CoreTypes.Lease, renewed, { signal });
      this.lastRenew = now;
      return true;
    } catch (err) {
      const level = isConflict(err) ? 'debug' : 'warn';
      this.log[level]('could not renew the lease as last written, reading it', { error: errorMessage(err) });
      return false;
    }
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const now = Date.now();
    const { namespace, name, identity } = this.config;
    const signal = AbortSignal.timeout(this.config.retryPeriodMs * 2);
    if (await this.renewAsLastWritten(now, signal)) return true;
    let lease: V1Lease;
    try {
      lease = await this.client.get<V1Lease>(CoreTypes.Lease, namespace, name, signal);
    } catch (err) {
      if (!isNotFound(err)) {
        this.log.warn('cannot read the leader lease', { error: errorMessage(err) });
        return false;
      }
      try {
        this.current = await this.client.create<V1Lease>(
          CoreTypes.Lease,
          {
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: { namespace, name },
            spec: {
              holderIdentity: identity,
              leaseDurationSeconds: Math.round(this.config.leaseDurationMs / 1000),
              acquireTime: microTime(now) as unknown as Date,
              renewTime: microTime(now) as unknown as Date,
              leaseTransitions: 0,
            },
          },
          { signal },
        );
        this.lastRenew = now;
        return true;
      } catch (createErr) {
        if (!isAlreadyExists(createErr))
          this.log.warn('cannot create the leader lease', { error: errorMessage(createErr) });
        return false;
      }
    }
    const spec = lease.spec ?? {};
    const record = `${spec.holderIdentity ?? ''}|${String(spec.renewTime ?? '')}|${spec.leaseTransitions ?? 0}`;
    if (record !== this.observedRecord) {
      this.observedRecord = record;
      this.observedAt = now;
    }
    this.current = lease;
    const heldByOther = !!spec.holderIdentity && spec.holderIdentity !== identity;
    if (heldByOther && this.observedAt + this.leaseDurationOf(lease) > now) return false;
    const weHeldIt = spec.holderIdentity === identity;
    const updated: V1Lease = {
      ...lease,
      spec: {
        ...spec,
        holderIdentity: identity,
        leaseDurationSeconds: Math.round(this.config.leaseDurationMs / 1000),
        renewTime: microTime(now) as unknown as Date,
        acquireTime: weHeldIt ? spec.acquireTime : (microTime(now) as unknown as Date),
        leaseTransitions: weHeldIt ? spec.leaseTransitions : (spec.leaseTransitions ?? 0) + 1,
      },
    };
    try {
      this.current = await this.client.update<V1Lease>(CoreTypes.Lease, updated, { signal });
      this.lastRenew = now;
      return true;
    } catch (err) {
      if (!isConflict(err)) this.log.warn('cannot update the leader lease', { error: errorMessage(err) });
      return false;
    }
  }
}
