import { randomBytes } from 'node:crypto';
import type { KubeClient } from '../../src/runtime/client/kube-client.ts';
import { CoreTypes } from '../../src/runtime/client/resource.ts';
import { TEST_NAMESPACE_LABEL } from './abandoned-namespaces.ts';

/** A fresh namespace per test, deleted afterwards (in the background: namespace deletion is slow). */
export async function createNamespace(client: KubeClient, prefix: string): Promise<string> {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  await client.create(CoreTypes.Namespace, {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, labels: { [TEST_NAMESPACE_LABEL]: 'true' } },
  });
  return name;
}

export async function deleteNamespace(client: KubeClient, name: string): Promise<void> {
  await client.delete(CoreTypes.Namespace, undefined, name).catch(() => undefined);
}

/** Adds `labels` to namespace `name` (e.g. the Pod Security ones), keeping its others. */
export async function labelNamespace(
  client: KubeClient,
  name: string,
  labels: Record<string, string>,
): Promise<void> {
  await client.patch(CoreTypes.Namespace, {
    namespace: undefined,
    name,
    patchType: 'merge',
    body: { metadata: { labels } },
  });
}
