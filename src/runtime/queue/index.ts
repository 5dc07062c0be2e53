export { createPrometheusQueueMetrics } from './metrics.ts';
export { defaultControllerRateLimiter } from './rate-limiters.ts';
export { TokenBucket } from './token-bucket.ts';
export { WorkQueue } from './work-queue.ts';
