import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { FIXTURE_STARTED } from '../../support/fixture-operator.ts';
import { waitFor } from '../../support/wait.ts';

/** One JSON log line of the fixture operator (winston's JSON format), or a raw line. */
export interface LogLine {
  message: string;
  level?: string;
  [field: string]: unknown;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

const FIXTURE = fileURLToPath(new URL('../../support/fixture-operator.ts', import.meta.url));

/**
 * test/support/fixture-operator.ts running as a child process (Node runs the TypeScript directly),
 * with its stdout log lines collected so a test can wait for and read them.
 */
export class OperatorProcess {
  readonly name: string;
  readonly child: ChildProcess;
  readonly logs: LogLine[] = [];
  readonly stderr: string[] = [];
  readonly exited: Promise<Exit>;
  exit: Exit | undefined;

  constructor(name: string, args: string[], env: NodeJS.ProcessEnv = {}) {
    this.name = name;
    this.child = spawn(process.execPath, [FIXTURE, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    createInterface({ input: this.child.stdout! }).on('line', (line) => this.logs.push(parseLine(line)));
    createInterface({ input: this.child.stderr! }).on('line', (line) => this.stderr.push(line));
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.exit = { code, signal };
        resolve(this.exit);
      });
    });
  }

  /** Waits for the first log line (at or after index `from`) that `match` accepts, and returns it. */
  async waitForLog(what: string, match: (line: LogLine) => boolean, timeoutMs = 30_000, from = 0) {
    return waitFor(`${this.name} to log ${what}`, () => this.logs.slice(from).find(match), {
      timeoutMs,
      intervalMs: 50,
    }).catch((err: unknown) => {
      throw new Error(`${err instanceof Error ? err.message : String(err)}\n${this.describe()}`);
    });
  }

  /** Index of the first log line with this message, or -1. */
  indexOf(message: string, from = 0): number {
    const i = this.logs.slice(from).findIndex((line) => line.message === message);
    return i < 0 ? -1 : i + from;
  }

  async identity(): Promise<string> {
    const line = await this.waitForLog('its identity', (l) => l.message === FIXTURE_STARTED);
    return String(line.identity);
  }

  /** The ports the manager bound (it logs them once serving). */
  async ports(): Promise<{ metrics: number; health: number }> {
    const line = await this.waitForLog('its ports', (l) => l.message === 'serving');
    return { metrics: Number(line.metricsPort), health: Number(line.healthPort) };
  }

  /** The exit, or a failure (with the last output) when the process is still running after `timeoutMs`. */
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
    if (this.exit === undefined) this.child.kill(signal);
  }

  /** The last lines of output, for failure messages. */
  describe(): string {
    const tail = this.logs.slice(-15).map((l) => JSON.stringify(l));
    return `--- ${this.name} (exit ${JSON.stringify(this.exit)}) last logs:\n${tail.join('\n')}\n${this.stderr.slice(-10).join('\n')}`;
  }
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

/** Flags every fixture process gets: the cluster, one namespace, ephemeral ports, info logs. */
export function fixtureFlags(kubeconfig: string, namespace: string): string[] {
  return [
    '--kubeconfig',
    kubeconfig,
    '--namespaces',
    namespace,
    '--metrics-bind-address',
    '127.0.0.1:0',
    '--health-probe-bind-address',
    '127.0.0.1:0',
    '--log-level',
    'info',
  ];
}

/** GET http://127.0.0.1:port/path -> status and body. */
export async function httpGet(port: number, path: string): Promise<{ status: number; body: string }> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: response.status, body: await response.text() };
}
