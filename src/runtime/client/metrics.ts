import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { perRegistry } from '../metrics.ts';
import type { PriorityThrottle } from './priority-throttle.ts';

/** What a KubeClient reports about each request it sends. */
export interface RequestObserver {
  /** Time spent waiting for the client-side rate limit (before the request left). */
  throttled(method: string, seconds: number): void;
  /** The request finished: an HTTP status code, or `<error>` when no response came. */
  completed(method: string, code: string): void;
}

// client-go's buckets for rest_client_rate_limiter_duration_seconds.
const RATE_LIMITER_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];

interface RequestMetrics {
  requests: Counter<'code' | 'method' | 'host'>;
  rateLimiter: Histogram<'verb' | 'host'>;
}

const requestMetrics = perRegistry<RequestMetrics>((registers) => ({
  requests: new Counter({
    name: 'rest_client_requests_total',
    help: 'Number of HTTP requests, partitioned by status code, method, and host.',
    labelNames: ['code', 'method', 'host'],
    registers,
  }),
  rateLimiter: new Histogram({
    name: 'rest_client_rate_limiter_duration_seconds',
    help: 'Client side rate limiter latency in seconds. Broken down by verb, and host.',
    labelNames: ['verb', 'host'],
    buckets: RATE_LIMITER_BUCKETS,
    registers,
  }),
}));

/**
 * controller-runtime's `rest_client_requests_total` and client-go's
 * `rest_client_rate_limiter_duration_seconds`. Every client of a process (the controllers', the
 * events') reports into the same series, as in client-go.
 */
export function requestObserver(registry: Registry, host: string): RequestObserver {
  const { requests, rateLimiter } = requestMetrics(registry);
  return {
    throttled: (method, seconds) => rateLimiter.observe({ verb: method, host }, seconds),
    completed: (method, code) => requests.inc({ code, method, host }),
  };
}

/**
 * The requests waiting for the controllers' rate limit, by lane: with the two series above it says
 * whether the operator is held back by its own budget or by the server.
 */
export function registerThrottleWaiting(registry: Registry, throttle: PriorityThrottle): void {
  new Gauge({
    name: 'basic_operator_client_throttle_waiting',
    help: 'Requests waiting for the client-side rate limit, by lane (high: work, low: status reports).',
    labelNames: ['priority'],
    registers: [registry],
    collect() {
      for (const [priority, waiting] of Object.entries(throttle.waiting())) this.set({ priority }, waiting);
    },
  });
}
