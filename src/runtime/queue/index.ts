export { type Clock, type ClockTimer, FakeClock, RealClock, realClock, type TimerOptions } from './clock.ts';
export {
  createPrometheusQueueMetrics,
  noopQueueMetrics,
  type QueueMetricSinks,
  type QueueMetrics,
  TimedQueueMetrics,
  WORKQUEUE_DURATION_BUCKETS,
  WORKQUEUE_METRIC_NAMES,
} from './metrics.ts';
export {
  BucketRateLimiter,
  DEFAULT_BASE_DELAY_MS,
  DEFAULT_MAX_DELAY_MS,
  DEFAULT_OVERALL_BURST,
  DEFAULT_OVERALL_QPS,
  defaultControllerRateLimiter,
  ItemExponentialFailureRateLimiter,
  MaxOfRateLimiter,
  type RateLimiter,
} from './rate-limiters.ts';
export { TokenBucket } from './token-bucket.ts';
export { WorkQueue, type WorkQueueOptions } from './work-queue.ts';
