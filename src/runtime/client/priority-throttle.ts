import type { TokenBucket } from '../queue/token-bucket.ts';

export type RequestPriority = 'high' | 'low';

interface Waiter {
  resolve(): void;
  reject(reason: unknown): void;
  signal: AbortSignal | undefined;
  onAbort?: () => void;
}

/**
 * The client-side QPS/burst limit with two lanes: each token goes to the oldest waiting high-priority
 * request, and to a low-priority one only when no high-priority request waits. Work that changes the
 * world (creating pods, scaling sets) goes first; writes that only report it (status) use what is
 * left, so under a tight budget reporting slows down before progress does.
 */
export class PriorityThrottle {
  private readonly bucket: TokenBucket;
  private readonly lanes: Record<RequestPriority, Waiter[]> = { high: [], low: [] };
  private pumping = false;

  constructor(bucket: TokenBucket) {
    this.bucket = bucket;
  }

  acquire(signal?: AbortSignal, priority: RequestPriority = 'high'): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, signal };
      if (signal) {
        waiter.onAbort = () => {
          const lane = this.lanes[priority];
          const i = lane.indexOf(waiter);
          if (i >= 0) lane.splice(i, 1);
          reject(signal.reason);
        };
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      this.lanes[priority].push(waiter);
      void this.pump();
    });
  }

  /** Waiting requests per lane (for tests and metrics). */
  waiting(): Record<RequestPriority, number> {
    return { high: this.lanes.high.length, low: this.lanes.low.length };
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.lanes.high.length > 0 || this.lanes.low.length > 0) {
        await this.bucket.acquire();
        const waiter = this.lanes.high.shift() ?? this.lanes.low.shift();
        if (!waiter) break; // everyone gave up meanwhile; the token is spent, as with a cancelled request
        if (waiter.onAbort) waiter.signal?.removeEventListener('abort', waiter.onAbort);
        waiter.resolve();
      }
    } finally {
      this.pumping = false;
    }
  }
}
