import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { httpGet } from './http.ts';
import { waitFor } from './wait.ts';

/**
 * An operator (src/main.ts, a test entry built on runMain, or the built image's command) running as
 * a child process, for the e2e suite on the local provider, the process-level integration tests and
 * the benchmark. It keeps every output line, waits for log lines and HTTP endpoints with a deadline
 * (and gives up at once, saying so, when the process exits), and stops it with SIGTERM then SIGKILL.
 * It imports only Node built-ins, http.ts and wait.ts, so e2e/, test/ and bench/ can all use it.
 */

/** Messages the manager (src/runtime/manager) logs at info level that tests wait for. */
export const MANAGER_LOG = {
  serving: 'serving',
  controllersStarted: 'caches synced, starting controllers',
  receivedSignal: 'received signal',
  releasedLease: 'released the leader lease',
} as const;

/** One JSON log line (winston's JSON format), or a raw line as its message. */
export interface LogLine {
  message: string;
  level?: string;
  [field: string]: unknown;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface OperatorProcessOptions {
  /** Names the process in failure messages. */
  name: string;
  /** Default: the Node running this code. */
  command?: string;
  args: string[];
  /** The child's whole environment. Default: this process's. */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Appends every output line to this file too. */
  logFile?: string;
  /** Writes every output line here too as it arrives, prefixed with the name. */
  echo?: NodeJS.WritableStream;
  /**
   * Keeps only about this many of the last lines in `lines` and `logs` (a long run of an operator
   * that logs much); indexes into them (waitForLog's `from`, indexOf) then mean nothing. Default: all.
   */
  retainLines?: number;
  /** Called with every line, parsed, as it arrives. */
  onLine?: (line: LogLine) => void;
}

export interface ProcStats {
  /** Peak resident set size (VmHWM). */
  rssPeakKiB: number;
  /** Resident set size now (VmRSS). */
  rssKiB: number;
  /** User plus system CPU time, in clock ticks (1/100 s). */
  cpuTicks: number;
}

export class OperatorProcess {
  readonly name: string;
  readonly child: ChildProcess;
  /** Every line of stdout and stderr, in the order they arrived. */
  readonly lines: string[] = [];
  /** The same lines, parsed. */
  readonly logs: LogLine[] = [];
  /** Resolves once the process exited and all its output was read. */
  readonly exited: Promise<Exit>;
  exit: Exit | undefined;
  private readonly logFile: string | undefined;
  /** Aborted when the process is gone, so waits on it end at once. */
  private readonly gone = new AbortController();

  constructor(options: OperatorProcessOptions) {
    this.name = options.name;
    this.logFile = options.logFile;
    this.child = spawn(options.command ?? process.execPath, options.args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const file = options.logFile ? createWriteStream(options.logFile, { flags: 'a' }) : undefined;
    const { echo, onLine, retainLines = Number.POSITIVE_INFINITY } = options;
    for (const stream of [this.child.stdout!, this.child.stderr!]) {
      createInterface({ input: stream }).on('line', (line) => {
        const parsed = parseLine(line);
        this.lines.push(line);
        this.logs.push(parsed);
        if (this.lines.length > 2 * retainLines) {
          this.lines.splice(0, this.lines.length - retainLines);
          this.logs.splice(0, this.logs.length - retainLines);
        }
        onLine?.(parsed);
        file?.write(`${line}\n`);
        echo?.write(`[${this.name}] ${line}\n`);
      });
    }
    this.exited = new Promise((resolve) => {
      const done = (exit: Exit) => {
        if (this.exit) return;
        this.exit = exit;
        this.gone.abort(new Error(`${this.name} exited (${describeExit(exit)})`));
        if (file) file.end(() => resolve(exit));
        else resolve(exit);
      };
      // 'close', not 'exit': every line of output has been read by then.
      this.child.once('close', (code, signal) => done({ code, signal }));
      this.child.once('error', (err) => {
        this.lines.push(`${this.name}: ${err.message}`);
        done({ code: null, signal: null });
      });
    });
  }

  get running(): boolean {
    return this.exit === undefined;
  }

  /** Waits for the first log line (at or after index `from`) that `match` accepts, and returns it. */
  waitForLog(
    what: string,
    match: (line: LogLine) => boolean,
    { timeoutMs = 30_000, from = 0 }: { timeoutMs?: number; from?: number } = {},
  ): Promise<LogLine> {
    return this.wait(`${this.name} to log ${what}`, () => this.logs.slice(from).find(match), timeoutMs);
  }

  /** Waits until GET 127.0.0.1:`port``path` answers 200; a failure names the last answer or error. */
  async waitForHttp(what: string, port: number, path: string, timeoutMs = 60_000): Promise<void> {
    await this.wait(
      `${this.name}: ${what} (GET 127.0.0.1:${port}${path} -> 200)`,
      async () => {
        const { status, body } = await httpGet(port, path);
        if (status === 200) return true;
        throw new Error(`${status} ${body.trim()}`);
      },
      timeoutMs,
    );
  }

  /** Waits until the manager runs its controllers (its caches synced). */
  async controllersStarted(timeoutMs = 60_000): Promise<void> {
    await this.waitForLog('that its controllers start', isMessage(MANAGER_LOG.controllersStarted), {
      timeoutMs,
    });
  }

  /** The ports the manager bound, from its log (it needs --log-level info or lower). */
  async ports(): Promise<{ metrics: number; health: number }> {
    const line = await this.waitForLog('the ports it serves', isMessage(MANAGER_LOG.serving));
    return { metrics: Number(line.metricsPort), health: Number(line.healthPort) };
  }

  /** Index of the first log line with this message at or after `from`, or -1. */
  indexOf(message: string, from = 0): number {
    const i = this.logs.slice(from).findIndex(isMessage(message));
    return i < 0 ? -1 : i + from;
  }

  /** The exit, or a failure (with the last output) when the process still runs after `timeoutMs`. */
  async exitWithin(timeoutMs: number): Promise<Exit> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`${this.name} did not exit within ${timeoutMs} ms\n${this.describe()}`)),
        timeoutMs,
      );
    });
    try {
      return await Promise.race([this.exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  kill(signal: NodeJS.Signals): void {
    if (this.running) this.child.kill(signal);
  }

  /**
   * Sends `signal` (SIGTERM: a graceful stop, in-flight reconciles finish and the Lease is released),
   * then SIGKILL if the process still runs after `graceMs`; resolves with the exit.
   */
  async stop({
    signal = 'SIGTERM',
    graceMs = 60_000,
  }: {
    signal?: NodeJS.Signals;
    graceMs?: number;
  } = {}): Promise<Exit> {
    this.kill(signal);
    const timer = setTimeout(() => this.kill('SIGKILL'), graceMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Peak memory and CPU time so far (Linux /proc); only while it runs. */
  stats(): ProcStats {
    if (!this.running || this.child.pid === undefined) throw new Error(`${this.name} is not running`);
    return procStats(this.child.pid);
  }

  /** State and last lines of output, for failure messages. */
  describe(count = 20): string {
    const state = this.exit ? `exited ${describeExit(this.exit)}` : 'running';
    const file = this.logFile ? `; full log: ${this.logFile}` : '';
    return `--- ${this.name} (${state}${file}), last lines:\n${this.lines.slice(-count).join('\n')}`;
  }

  private wait<T>(what: string, check: () => Promise<T | undefined> | T | undefined, timeoutMs: number) {
    return waitFor(what, check, { timeoutMs, intervalMs: 50, signal: this.gone.signal }).catch(
      (err: unknown) => {
        throw new Error(`${err instanceof Error ? err.message : String(err)}\n${this.describe()}`);
      },
    );
  }
}

const isMessage = (message: string) => (line: LogLine) => line.message === message;

function describeExit(exit: Exit): string {
  return exit.signal ? `by ${exit.signal}` : `with code ${exit.code}`;
}

function parseLine(line: string): LogLine {
  try {
    const parsed: unknown = JSON.parse(line);
    if (parsed && typeof parsed === 'object' && 'message' in parsed) return parsed as LogLine;
  } catch {
    // not JSON: keep it raw
  }
  return { message: line };
}

/** Peak RSS and CPU ticks of any process of this machine (Linux /proc). */
export function procStats(pid: number): ProcStats {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const hwm = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  const rss = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return { rssPeakKiB: hwm, rssKiB: rss, cpuTicks: Number(stat[11]) + Number(stat[12]) };
}

/** A free TCP port on the loopback interface. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
