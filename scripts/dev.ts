import { spawn } from 'node:child_process';
import { HttpMethod, KubeConfig } from '@kubernetes/client-node';
import { runOk } from '../e2e/providers/exec.ts';
import { LocalProvider } from '../e2e/providers/local/index.ts';
import { toolchainPaths } from '../e2e/providers/local/toolchain.ts';
import { KubeClient } from '../src/runtime/client/kube-client.ts';

/**
 * `npm run dev`: run the operator against the current kubeconfig's cluster; when there is none (or it
 * does not answer), bring up the local control plane and use that. Installs the CRDs first.
 */
async function reachable(): Promise<boolean> {
  try {
    const kc = new KubeConfig();
    kc.loadFromDefault();
    if (!kc.getCurrentCluster()) return false;
    await new KubeClient(kc).request(HttpMethod.GET, '/version', { timeoutMs: 5000 });
    return true;
  } catch {
    return false;
  }
}

const env = { ...process.env };
// A local run serves /metrics over plain HTTP on :8080 (no token to fetch); --metrics-secure wins.
env.BASIC_OPERATOR_METRICS_SECURE ??= 'false';
let kubectl = 'kubectl';
if (!(await reachable())) {
  process.stderr.write(
    '[dev] no cluster answers for the current kubeconfig; starting the local control plane\n',
  );
  const info = await new LocalProvider().up();
  env.KUBECONFIG = info.kubeconfig;
  kubectl = info.kubectl;
} else if (toolchainPaths().kubectl) {
  kubectl = toolchainPaths().kubectl;
}
process.stderr.write('[dev] installing the CRDs\n');
await runOk(kubectl, ['apply', '--server-side', '--force-conflicts', '-f', 'config/crd/bases/'], { env });
const child = spawn(process.execPath, ['src/main.ts', ...process.argv.slice(2)], { stdio: 'inherit', env });
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));
child.on('exit', (code) => process.exit(code ?? 1));
