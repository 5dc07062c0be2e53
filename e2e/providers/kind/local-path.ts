import { runOk } from '../exec.ts';

/**
 * How long local-path-provisioner waits for a helper pod (mkdir or rm of a volume's directory) before
 * it fails the claim's provisioning and retries. Its default, 120 s, is longer than the suites wait
 * for a Machine: a helper whose container failed to start (runc in a kind node under load has
 * refused one with "unable to freeze") held its claim Pending for 120 s, then the retry took 3 s.
 */
export const HELPER_TIMEOUT_SECONDS = 30;

/** kind's local-path config.json with the helper timeout set (the provisioner's cmdTimeoutSeconds). */
export function withHelperTimeout(configJson: string, seconds = HELPER_TIMEOUT_SECONDS): string {
  const config = JSON.parse(configJson) as Record<string, unknown>;
  return JSON.stringify({ ...config, cmdTimeoutSeconds: seconds }, null, 2);
}

/** Sets the helper timeout in the cluster's local-path-config and restarts the provisioner to read it. */
export async function shortenLocalPathHelperTimeout(kubectl: string, kubeconfig: string): Promise<void> {
  const k = (...args: string[]) =>
    runOk(kubectl, ['--kubeconfig', kubeconfig, '-n', 'local-path-storage', ...args]);
  const current = await k('get', 'configmap', 'local-path-config', '-o', 'jsonpath={.data.config\\.json}');
  if ((JSON.parse(current) as { cmdTimeoutSeconds?: number }).cmdTimeoutSeconds === HELPER_TIMEOUT_SECONDS)
    return;
  const wanted = withHelperTimeout(current);
  await k(
    'patch',
    'configmap',
    'local-path-config',
    '--type',
    'merge',
    '-p',
    JSON.stringify({ data: { 'config.json': wanted } }),
  );
  await k('rollout', 'restart', 'deployment/local-path-provisioner');
  await k('rollout', 'status', 'deployment/local-path-provisioner', '--timeout=120s');
}
