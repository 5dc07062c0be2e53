import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { rootLogger } from '../../../src/runtime/log.ts';
import { memoryBudget, reportMemoryBudget } from '../../../src/runtime/manager/memory-budget.ts';

const MiB = 1048576;

describe('memory budget', () => {
  it('reads a cgroup limit, and no limit from 0 or an unlimited cgroup', () => {
    assert.equal(memoryBudget(512 * MiB, 307 * MiB).limitBytes, 512 * MiB);
    assert.equal(memoryBudget(0, 4000 * MiB).limitBytes, undefined);
    assert.equal(memoryBudget(2 ** 64 - 1, 4000 * MiB).limitBytes, undefined);
  });

  it('exports the limit and the heap limit, and warns when the heap leaves too little outside it', async () => {
    const lines: string[] = [];
    const log = rootLogger('error');
    const warn = log.warn.bind(log);
    log.warn = ((message: string) => {
      lines.push(message);
      return warn(message);
    }) as typeof log.warn;
    const registry = new Registry();
    reportMemoryBudget(memoryBudget(512 * MiB, 480 * MiB), log, registry);
    const text = await registry.metrics();
    assert.match(text, /^basic_operator_memory_limit_bytes 536870912$/m);
    assert.match(text, /^basic_operator_heap_limit_bytes 503316480$/m);
    assert.equal(lines.length, 1);
    assert.match(lines[0]!, /heap may grow past the memory limit/);

    lines.length = 0;
    reportMemoryBudget(memoryBudget(512 * MiB, 307 * MiB), log, new Registry());
    assert.equal(lines.length, 0, 'a 307 MiB heap in 512 MiB leaves room');
  });
});
