import type { V1ObjectMeta } from '@kubernetes/client-node';
import { run } from '../providers/exec.ts';
import type { ClusterInfo } from '../providers/provider.ts';

/**
 * Test namespaces whose deletion waits on the operator's finalizers after the operator is gone. The
 * tests and suites stop their operator, or uninstall it, before their namespace is gone; a backup
 * claim's finalizer (or a Machine's, a provider object's) then holds the namespace Terminating for
 * good, and a cluster kept between runs (the local cluster's etcd, kind's node container) collects
 * them while kube-controller-manager keeps retrying each.
 */

/** The kinds that may carry a finalizer of the operator's (or of the example provider's). */
const FINALIZED_KINDS = [
  'machines.infra.basicoperator.dev',
  'podmachines.infra.basicoperator.dev',
  'volumebackups.infra.basicoperator.dev',
  'statefulsetmachines.examples.basicoperator.dev',
  'persistentvolumeclaims',
];

const OPERATOR_FINALIZER = /^(infra|apps|examples)\.basicoperator\.dev\//;

/** The label every namespace the tests create carries (e2e/support/namespace.ts). */
export const TEST_NAMESPACE_LABEL = 'basicoperator.dev/test';

/** How long a test namespace stays Terminating before a later run takes it for abandoned. */
const ABANDONED_AFTER_MS = 120_000;

function kubectl(cluster: ClusterInfo, args: string[]) {
  return run(cluster.kubectl, ['--kubeconfig', cluster.kubeconfig, ...args], { timeoutMs: 120_000 });
}

/**
 * Removes the finalizers of the operator's domains from every object of `FINALIZED_KINDS` in
 * `namespace` (the Machines' `volume-backup`, the provider objects' `machine`, the backup claims'
 * `backup-claim`), keeping any other (a claim's `kubernetes.io/pvc-protection`). A kind the cluster
 * does not serve is skipped.
 */
export async function removeOperatorFinalizers(cluster: ClusterInfo, namespace: string): Promise<void> {
  for (const kind of FINALIZED_KINDS) {
    const listed = await kubectl(cluster, ['get', kind, '-n', namespace, '-o', 'json']);
    if (listed.code !== 0) continue;
    const items = (JSON.parse(listed.stdout) as { items: Array<{ metadata: V1ObjectMeta }> }).items;
    for (const { metadata } of items) {
      const finalizers = metadata.finalizers ?? [];
      const kept = finalizers.filter((f) => !OPERATOR_FINALIZER.test(f));
      if (kept.length === finalizers.length) continue;
      await kubectl(cluster, [
        'patch',
        kind,
        metadata.name ?? '',
        '-n',
        namespace,
        '--type=merge',
        '-p',
        JSON.stringify({ metadata: { finalizers: kept.length > 0 ? kept : null } }),
      ]);
    }
  }
}

/**
 * The test namespaces (labelled TEST_NAMESPACE_LABEL, or the suites' `bo-...`) that an earlier run
 * left Terminating for over two minutes: their operator is gone, so its finalizers are removed and
 * the namespaces can go; only `among` them when given (a test's own). Returns their names.
 */
export async function releaseAbandonedNamespaces(
  cluster: ClusterInfo,
  { now = Date.now(), among }: { now?: number; among?: readonly string[] } = {},
): Promise<string[]> {
  const listed = await kubectl(cluster, ['get', 'namespaces', '-o', 'json']);
  if (listed.code !== 0) return [];
  const namespaces = (JSON.parse(listed.stdout) as { items: Array<{ metadata: V1ObjectMeta }> }).items;
  const abandoned = namespaces
    .map((n) => n.metadata)
    .filter(
      (m) =>
        (among === undefined || among.includes(m.name ?? '')) &&
        (m.name?.startsWith('bo-') || m.labels?.[TEST_NAMESPACE_LABEL] === 'true') &&
        m.deletionTimestamp !== undefined &&
        now - Date.parse(String(m.deletionTimestamp)) > ABANDONED_AFTER_MS,
    )
    .map((m) => m.name ?? '');
  for (const namespace of abandoned) await removeOperatorFinalizers(cluster, namespace);
  return abandoned;
}

/** Releases them and says so in one line on stderr, under `prefix`. */
export async function releaseAndSay(cluster: ClusterInfo, prefix: string): Promise<void> {
  const names = await releaseAbandonedNamespaces(cluster);
  if (names.length > 0) {
    process.stderr.write(
      `${prefix} released the operator's finalizers in ${names.length} namespace(s) earlier runs left Terminating: ${names.join(', ')}\n`,
    );
  }
}
