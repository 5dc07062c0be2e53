// Runs the kubectl-basic binary as a user would: `node bin/kubectl-basic.js ...` with a kubeconfig.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { testCluster } from '../../../e2e/support/cluster.ts';
import { waitFor } from '../../../e2e/support/wait.ts';

const BIN = fileURLToPath(new URL('../../../bin/kubectl-basic.js', import.meta.url));

export interface PluginResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the plugin with `args`; `kubeconfig` defaults to the test cluster's. */
export async function kubectlBasic(args: string[], kubeconfig?: string): Promise<PluginResult> {
  const file = kubeconfig ?? (await testCluster()).kubeconfig;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, '--kubeconfig', file, ...args],
      { env: { PATH: process.env.PATH ?? '', HOME: '/nonexistent' }, timeout: 30_000 },
      (err, stdout, stderr) => {
        const code = err && typeof err.code === 'number' ? err.code : err ? -1 : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** Runs `why` until its output matches (the situation takes a moment to build up). */
export async function whyUntil(args: string[], expected: RegExp, timeoutMs = 60_000): Promise<PluginResult> {
  let last: PluginResult | undefined;
  try {
    return await waitFor(
      `kubectl basic why ${args.join(' ')} to print ${expected}`,
      async () => {
        last = await kubectlBasic(['why', ...args]);
        return expected.test(last.stdout) ? last : undefined;
      },
      { timeoutMs, intervalMs: 1000 },
    );
  } catch (err) {
    throw new Error(
      `${err instanceof Error ? err.message : String(err)}; last output: ${JSON.stringify(last)}`,
    );
  }
}
