import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { testCluster, testKubeConfig } from '../../../e2e/support/cluster.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';
import { parseConfig } from '../../../src/runtime/manager/config.ts';
import { Manager } from '../../../src/runtime/manager/manager.ts';
import { TEST_CONTROLLERS_USER_AGENT } from '../../support/manager.ts';

const CALLS = 30;

/** A manager that is constructed but not started: only its client is used. */
async function managerWith(flags: string[]): Promise<Manager> {
  const config = parseConfig(
    ['--kubeconfig', (await testCluster()).kubeconfig, '--log-level', 'error', ...flags],
    {},
  );
  if (config === 'help') throw new Error('unexpected help');
  return new Manager(config, await testKubeConfig(), { userAgent: TEST_CONTROLLERS_USER_AGENT });
}

/** Milliseconds for CALLS sequential reads through the manager's client. */
async function timeCalls(manager: Manager): Promise<number> {
  const started = Date.now();
  for (let i = 0; i < CALLS; i++) await manager.client.get(CoreTypes.Namespace, undefined, 'default');
  return Date.now() - started;
}

describe('client-side API rate limit (--kube-api-qps, --kube-api-burst)', () => {
  it(`spaces ${CALLS} calls at qps 5 after a burst of 5, and does not slow them without a limit`, {
    timeout: 30_000,
  }, async (t) => {
    const unlimitedMs = await timeCalls(await managerWith(['--kube-api-qps', '0']));
    const limitedMs = await timeCalls(await managerWith(['--kube-api-qps', '5', '--kube-api-burst', '5']));
    t.diagnostic(
      `${CALLS} calls: ${unlimitedMs} ms without a limit, ${limitedMs} ms at qps 5 / burst 5 ` +
        `(ratio ${(limitedMs / Math.max(1, unlimitedMs)).toFixed(1)})`,
    );
    // 5 calls from the full bucket, then 25 more at 5 per second: 5 s.
    assert.ok(limitedMs >= 4_500, `limited: ${limitedMs} ms`);
    assert.ok(limitedMs < 10_000, `limited: ${limitedMs} ms`);
    assert.ok(unlimitedMs < 2_500, `unlimited: ${unlimitedMs} ms`);
    assert.ok(limitedMs > 2 * unlimitedMs);
  });
});
