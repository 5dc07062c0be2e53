import { getHeapStatistics } from 'node:v8';
import { Gauge, type Registry } from 'prom-client';
import type { Logger } from '../log.ts';

/**
 * Outside the JavaScript heap the process needs room for code, the young generation, buffers and
 * native allocations: about 60 to 80 MiB measured at 10,000 pods. A heap limit closer than this to
 * the memory limit lets the kernel kill the process (OOMKilled, no message) before V8 fails with a
 * clear "heap out of memory".
 */
const NON_HEAP_RESERVE_BYTES = 64 * 1024 * 1024;

export interface MemoryBudget {
  /** The cgroup (container) memory limit, or undefined when the process has none. */
  limitBytes: number | undefined;
  /** The most the V8 heap may grow to (heap_size_limit). */
  heapLimitBytes: number;
}

/**
 * The container's memory limit as libuv reads it (cgroup v1 or v2), and the heap limit V8 took. The
 * image sizes the heap from that limit (`--max-old-space-size-percentage`); with no limit, Node sizes
 * it from the machine's memory.
 */
export function memoryBudget(
  constrained = process.constrainedMemory(),
  heapLimitBytes = getHeapStatistics().heap_size_limit,
): MemoryBudget {
  // 0 means unknown; an unlimited cgroup reports a huge number (2^64 - 1, or near it).
  const limited = constrained > 0 && constrained < 2 ** 60;
  return { limitBytes: limited ? constrained : undefined, heapLimitBytes };
}

/** Says the budget at start, warns when the heap may outgrow the limit, and exports both as gauges. */
export function reportMemoryBudget(budget: MemoryBudget, log: Logger, registry: Registry): void {
  const mib = (bytes: number) => Math.round(bytes / 1048576);
  const limit = budget.limitBytes;
  log.info('memory budget', {
    memoryLimitMiB: limit === undefined ? 'none' : mib(limit),
    heapLimitMiB: mib(budget.heapLimitBytes),
  });
  if (limit !== undefined && budget.heapLimitBytes + NON_HEAP_RESERVE_BYTES > limit) {
    log.warn(
      'the JavaScript heap may grow past the memory limit: the process would be OOM-killed without a message. ' +
        'Leave at least 64 MiB outside the heap (--max-old-space-size-percentage or --max-old-space-size in NODE_OPTIONS)',
      { memoryLimitMiB: mib(limit), heapLimitMiB: mib(budget.heapLimitBytes) },
    );
  }
  new Gauge({
    name: 'basic_operator_memory_limit_bytes',
    help: 'The memory limit of the cgroup (container) the process runs in; 0 when it has none',
    registers: [registry],
  }).set(limit ?? 0);
  new Gauge({
    name: 'basic_operator_heap_limit_bytes',
    help: 'The most the V8 heap may grow to (heap_size_limit), sized from the memory limit',
    registers: [registry],
  }).set(budget.heapLimitBytes);
}
