import { testCluster, testKubeConfig } from '../../e2e/support/cluster.ts';
import { operatorManagerOptions } from '../../src/controllers/index.ts';
import { parseConfig } from '../../src/runtime/manager/config.ts';
import { Manager } from '../../src/runtime/manager/manager.ts';
import { testLogger } from './log.ts';

export const TEST_CONTROLLERS_USER_AGENT = 'basic-operator-tests-controllers';

/**
 * Runs a manager in this process against the test cluster, watching only `namespaces`, without
 * leader election and on ephemeral ports, with the operator's cache selections (as src/main.ts).
 * `register` adds the controllers under test. A test that registers controllers of its own, not the
 * operator's, passes `userAgent: TEST_CONTROLLERS_USER_AGENT` so that the audit log does not count
 * their requests as the operator's (e2e/support/least-privilege.ts).
 * Returns the started manager; call `manager.stop()` when done.
 */
export async function startTestManager(
  namespaces: string[],
  register: (manager: Manager) => void,
  extraFlags: string[] = [],
  options: { userAgent?: string } = {},
): Promise<Manager> {
  testLogger();
  const info = await testCluster();
  const config = parseConfig(
    [
      '--kubeconfig',
      info.kubeconfig,
      '--namespaces',
      namespaces.join(','),
      '--metrics-secure=false',
      '--metrics-bind-address',
      '127.0.0.1:0',
      '--health-probe-bind-address',
      '127.0.0.1:0',
      '--log-level',
      process.env.TEST_LOG_LEVEL ?? 'error',
      ...extraFlags,
    ],
    {},
  );
  if (config === 'help') throw new Error('unexpected help');
  const manager = new Manager(config, await testKubeConfig(), { ...operatorManagerOptions, ...options });
  register(manager);
  await manager.start();
  return manager;
}
