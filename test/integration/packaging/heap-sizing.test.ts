import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { imageNodeFlags } from '../../../e2e/support/image-node-flags.ts';

/**
 * The image's Node flags size the V8 heap from the container's memory limit, not from the machine:
 * node runs in a memory cgroup of the chart's default limit (512 MiB) and reports its heap limit.
 * Needs a writable cgroup v1 memory hierarchy (root, as in CI); skipped elsewhere.
 */
const MiB = 1048576;
const LIMIT = 512 * MiB;
const V1_ROOT = '/sys/fs/cgroup/memory';
const cgroup = `${V1_ROOT}/basic-operator-heap-sizing-${process.pid}`;

function canCreateCgroup(): boolean {
  if (process.getuid?.() !== 0 || !existsSync(`${V1_ROOT}/memory.limit_in_bytes`)) return false;
  try {
    mkdirSync(cgroup);
    return true;
  } catch {
    return false;
  }
}

const usable = canCreateCgroup();

describe('the image sizes the heap from the memory limit', {
  skip: usable ? false : 'needs root and a cgroup v1 memory hierarchy',
}, () => {
  after(() => {
    if (existsSync(cgroup)) rmdirSync(cgroup);
  });

  it('gives the old space 60% of a 512 MiB limit, whatever the machine has', () => {
    writeFileSync(`${cgroup}/memory.limit_in_bytes`, String(LIMIT));
    const report = (flags: string[]) =>
      JSON.parse(
        execFileSync(
          'sh',
          [
            '-c',
            `echo $$ > ${cgroup}/cgroup.procs && exec "$0" "$@"`,
            process.execPath,
            ...flags,
            '-e',
            'console.log(JSON.stringify({ limit: process.constrainedMemory(), heap: require("node:v8").getHeapStatistics().heap_size_limit }))',
          ],
          { encoding: 'utf8' },
        ),
      ) as { limit: number; heap: number };
    const inImage = report(imageNodeFlags());
    assert.equal(inImage.limit, LIMIT, 'node sees the cgroup limit');
    const heapMiB = inImage.heap / MiB;
    // 60% of 512 MiB is 307 MiB of old space; the young generation adds a few MiB.
    assert.ok(heapMiB >= 300 && heapMiB <= 330, `heap limit ${heapMiB.toFixed(0)} MiB, expected about 310`);
    assert.ok(inImage.heap + 64 * MiB <= LIMIT, 'at least 64 MiB stays outside the heap');
  });
});
