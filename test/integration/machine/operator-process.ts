// Runs test/integration/machine/operator.ts as a child process that a test can SIGKILL.
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { testCluster } from '../../support/cluster.ts';
import { waitFor } from '../../support/wait.ts';
import type { ControllerName } from './operator.ts';

const ENTRY = fileURLToPath(new URL('./operator.ts', import.meta.url));
/** What the manager logs once its caches synced and its controllers run. */
const STARTED = 'caches synced, starting controllers';

export class MachineOperator {
  readonly child: ChildProcess;
  readonly lines: string[] = [];
  private exited: Promise<void>;
  private running = true;

  private constructor(args: string[]) {
    this.child = spawn(process.execPath, [ENTRY, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    for (const stream of [this.child.stdout!, this.child.stderr!]) {
      createInterface({ input: stream }).on('line', (line) => this.lines.push(line));
    }
    this.exited = new Promise((resolve) =>
      this.child.once('exit', () => {
        this.running = false;
        resolve();
      }),
    );
  }

  /** Starts an operator watching `namespace` and waits until its controllers run. */
  static async start(namespace: string, controllers?: readonly ControllerName[]): Promise<MachineOperator> {
    const info = await testCluster();
    const args = [
      '--kubeconfig',
      info.kubeconfig,
      '--namespaces',
      namespace,
      '--metrics-bind-address',
      '0',
      '--health-probe-bind-address',
      '0',
      '--log-level',
      'info',
      ...(controllers ? ['--controllers', controllers.join(',')] : []),
    ];
    const operator = new MachineOperator(args);
    await waitFor('the operator to start its controllers', () => {
      if (!operator.running) throw new Error(`the operator exited:\n${operator.tail()}`);
      return operator.lines.some((l) => l.includes(STARTED));
    }).catch((err: unknown) => {
      operator.child.kill('SIGKILL');
      throw err;
    });
    return operator;
  }

  /** SIGKILL: no graceful shutdown, no lease release, in-flight writes cut off. */
  async kill(): Promise<void> {
    if (this.running) this.child.kill('SIGKILL');
    await this.exited;
  }

  tail(lines = 20): string {
    return this.lines.slice(-lines).join('\n');
  }
}
