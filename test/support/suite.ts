import { testClient } from '../../e2e/support/cluster.ts';
import { installCrds } from '../../e2e/support/crds.ts';
import { createNamespace, deleteNamespace } from '../../e2e/support/namespace.ts';
import type { KubeClient } from '../../src/runtime/client/kube-client.ts';
import type { Manager } from '../../src/runtime/manager/manager.ts';
import { startTestManager } from './manager.ts';

export interface OperatorSuite {
  client: KubeClient;
  ns: string;
  manager: Manager;
}

/** What a controller test file starts with: the CRDs, a fresh namespace, and a manager watching it. */
export async function startOperatorSuite(
  prefix: string,
  register: (manager: Manager) => void,
): Promise<OperatorSuite> {
  await installCrds();
  const client = await testClient();
  const ns = await createNamespace(client, prefix);
  const manager = await startTestManager([ns], register);
  return { client, ns, manager };
}

export async function stopOperatorSuite(suite: OperatorSuite | undefined): Promise<void> {
  if (!suite) return;
  await suite.manager.stop(); // idempotent: callers may have stopped it already
  await deleteNamespace(suite.client, suite.ns);
}
