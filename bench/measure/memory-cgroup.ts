import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';

/**
 * Runs the operator inside a memory limit, as the chart's pod runs it: a cgroup v1 memory group
 * (this machine's hierarchy; root only) with that limit, entered by a shell that then execs node, so
 * Node sizes its heap from the limit exactly as in a container. The kernel kills the process if it
 * goes over (reported as an exit by SIGKILL, and by the group's failcnt).
 */
const V1_ROOT = '/sys/fs/cgroup/memory';

export class MemoryCgroup {
  readonly path: string;
  readonly limitBytes: number;

  private constructor(path: string, limitBytes: number) {
    this.path = path;
    this.limitBytes = limitBytes;
  }

  /**
   * A group of this process's own, `<name>-<pid>`: two runs at once (the benchmark's and the soak's
   * integration tests) never share one, nor remove the other's. Removed when this process exits, if
   * remove() was not called before (and its operator has exited).
   */
  static create(name: string, limitBytes: number): MemoryCgroup {
    if (!existsSync(`${V1_ROOT}/memory.limit_in_bytes`)) {
      throw new Error(`--operator-memory-limit needs a cgroup v1 memory hierarchy at ${V1_ROOT}`);
    }
    const path = `${V1_ROOT}/${name}-${process.pid}`;
    if (!existsSync(path)) mkdirSync(path);
    writeFileSync(`${path}/memory.limit_in_bytes`, String(limitBytes));
    const group = new MemoryCgroup(path, limitBytes);
    process.once('exit', () => group.remove());
    return group;
  }

  /** The command and arguments that run `command args` inside the group. */
  wrap(command: string, args: string[]): { command: string; args: string[] } {
    return {
      command: 'sh',
      args: ['-c', `echo $$ > ${this.path}/cgroup.procs && exec "$0" "$@"`, command, ...args],
    };
  }

  /** Times the group reached its limit (memory.failcnt). */
  failures(): number {
    return Number(readFileSync(`${this.path}/memory.failcnt`, 'utf8').trim());
  }

  /** The group's peak memory use so far (memory.max_usage_in_bytes: RSS and page cache, as the kernel counts it). */
  peakBytes(): number {
    return Number(readFileSync(`${this.path}/memory.max_usage_in_bytes`, 'utf8').trim());
  }

  /** Clears the peak, so that peakBytes() counts from now (a fresh group may hold a previous run's). */
  resetPeak(): void {
    writeFileSync(`${this.path}/memory.max_usage_in_bytes`, '0');
  }

  remove(): void {
    try {
      rmdirSync(this.path);
    } catch {
      // still has a process, or gone already
    }
  }
}

/** "512Mi", "1Gi", "300M" or a byte count, as Kubernetes quantities write memory. */
export function parseMemory(quantity: string): number {
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|K|M|G)?$/.exec(quantity.trim());
  if (!m) throw new Error(`not a memory quantity: ${quantity}`);
  const unit = { Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, K: 1e3, M: 1e6, G: 1e9 }[m[2] ?? ''] ?? 1;
  return Math.round(Number(m[1]) * unit);
}

/** The chart's default memory limit (charts/basic-operator/values.yaml, resources.limits.memory). */
export function chartMemoryLimit(valuesFile = 'charts/basic-operator/values.yaml'): string {
  const lines = readFileSync(valuesFile, 'utf8').split('\n');
  const limits = lines.findIndex((l) => /^\s{2}limits:\s*$/.test(l));
  const memory = lines.slice(limits + 1).find((l) => /^\s{4}memory:/.test(l));
  if (limits < 0 || !memory) throw new Error(`${valuesFile} has no resources.limits.memory`);
  return memory.split(':')[1]!.trim();
}
