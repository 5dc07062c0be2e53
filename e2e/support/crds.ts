import { runOk } from '../providers/exec.ts';
import type { ClusterInfo } from '../providers/provider.ts';
import { testCluster } from './cluster.ts';

let installed: Promise<void> | undefined;

/** Applies the generated CRDs (idempotent) to the test cluster and waits until the API serves them. */
export function installCrds(): Promise<void> {
  installed ??= (async () => installCrdsInto(await testCluster()))();
  return installed;
}

/** installCrds for a cluster other than the test cluster (one a test brought up for itself). */
export async function installCrdsInto(info: ClusterInfo): Promise<void> {
  const kubectl = (args: string[]) => runOk(info.kubectl, ['--kubeconfig', info.kubeconfig, ...args]);
  await kubectl(['apply', '--server-side', '--force-conflicts', '-f', 'config/crd/bases/']);
  await kubectl(['wait', '--for=condition=Established', '--timeout=60s', '-f', 'config/crd/bases/']);
}
