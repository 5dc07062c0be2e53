import { runOk } from '../../e2e/providers/exec.ts';
import { testCluster } from './cluster.ts';

let installed: Promise<void> | undefined;

/** Applies the generated CRDs (idempotent) and waits until the API serves them. */
export function installCrds(): Promise<void> {
  installed ??= (async () => {
    const info = await testCluster();
    const kubectl = (args: string[]) => runOk(info.kubectl, ['--kubeconfig', info.kubeconfig, ...args]);
    await kubectl(['apply', '--server-side', '--force-conflicts', '-f', 'config/crd/bases/']);
    await kubectl(['wait', '--for=condition=Established', '--timeout=60s', '-f', 'config/crd/bases/']);
  })();
  return installed;
}
