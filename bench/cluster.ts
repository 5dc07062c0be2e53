import { KubeConfig } from '@kubernetes/client-node';
import { runOk } from '../e2e/providers/exec.ts';
import { type Component, pidOf } from '../e2e/providers/local/components.ts';
import type { ClusterInfo } from '../e2e/providers/provider.ts';
import { procStats } from '../e2e/support/operator-process.ts';
import { waitFor } from '../e2e/support/wait.ts';
import { isNotFound } from '../src/runtime/client/errors.ts';
import { KubeClient } from '../src/runtime/client/kube-client.ts';
import { CoreTypes } from '../src/runtime/client/resource.ts';
import { labelledSamples } from './measure/prometheus-text.ts';

/** The order in which the CPU lines name the control plane's processes. */
const CONTROL_PLANE: Component[] = [
  'kube-apiserver',
  'etcd',
  'kube-scheduler',
  'kwok-controller',
  'kube-controller-manager',
];

/**
 * The cluster the benchmark measures: its client, its namespaces, and what the bench reads of its
 * control plane (the processes and CPU of the local provider's, the API server's request counts).
 */
export class MeasuredCluster {
  readonly info: ClusterInfo;
  /** The local cluster's name, whose processes the bench sees; undefined on kind. */
  readonly local: string | undefined;
  readonly kc = new KubeConfig();
  readonly client: KubeClient;

  constructor(info: ClusterInfo, local: string | undefined) {
    this.info = info;
    this.local = local;
    this.kc.loadFromFile(info.kubeconfig);
    this.client = new KubeClient(this.kc, { userAgent: 'basic-operator-bench' });
  }

  kubectl(args: string[]): Promise<string> {
    return runOk(this.info.kubectl, ['--kubeconfig', this.info.kubeconfig, ...args]);
  }

  /** The pid of a control-plane process (local provider), or undefined. */
  pid(component: Component): number | undefined {
    if (this.local === undefined) return undefined;
    try {
      return pidOf(component, this.local);
    } catch {
      return undefined;
    }
  }

  async deleteNamespace(name: string): Promise<void> {
    await this.client.delete(CoreTypes.Namespace, undefined, name).catch(() => undefined);
    await waitFor(
      `namespace ${name} to be deleted`,
      () => this.client.get(CoreTypes.Namespace, undefined, name).then(() => false, isNotFound),
      { timeoutMs: 10 * 60_000, intervalMs: 1000 },
    );
  }

  async freshNamespace(name: string): Promise<void> {
    await this.deleteNamespace(name);
    await this.client.create(CoreTypes.Namespace, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name },
    });
    await waitFor(`the default ServiceAccount of namespace ${name}`, () =>
      this.client.get(CoreTypes.ServiceAccount, name, 'default'),
    );
  }

  /** CPU ticks of each control-plane process (local provider only: they run as local processes). */
  controlPlaneTicks(): Map<string, number> {
    const ticks = new Map<string, number>();
    if (this.local === undefined) return ticks;
    for (const component of CONTROL_PLANE) {
      try {
        ticks.set(component, procStats(pidOf(component, this.local)).cpuTicks);
      } catch {
        // a component that is not running has no figure
      }
    }
    return ticks;
  }

  /** CPU ticks of the processes sharing the machine's cores during a side: control plane, controller, bench. */
  machineTicks(controller?: readonly [string, number]): Map<string, number> {
    const ticks = this.controlPlaneTicks();
    if (ticks.size === 0) return ticks;
    if (controller) ticks.set(controller[0], controller[1]);
    const bench = process.cpuUsage();
    ticks.set('bench', (bench.user + bench.system) / 1e4);
    return ticks;
  }

  /**
   * apiserver_request_total summed by "VERB resource[/subresource]", refused requests apart
   * ("... refused 422"); and watchers the API server closed because they did not keep up
   * (apiserver_terminated_watchers_total, as "slow watchers closed resource").
   */
  async apiRequestCounts(): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    const add = (key: string, value: number) => counts.set(key, (counts.get(key) ?? 0) + value);
    const text = await this.kubectl(['get', '--raw', '/metrics']);
    for (const { metric, labels, value } of labelledSamples(text, [
      'apiserver_request_total',
      'apiserver_terminated_watchers_total',
    ])) {
      const resource = `${labels.resource}${labels.subresource ? `/${labels.subresource}` : ''}`;
      if (metric === 'apiserver_terminated_watchers_total') add(`slow watchers closed ${resource}`, value);
      else if (Number(labels.code) >= 400) add(`${labels.verb} ${resource} refused ${labels.code}`, value);
      else add(`${labels.verb} ${resource}`, value);
    }
    return counts;
  }
}

export function cpuSpent(
  before: Map<string, number>,
  after: Map<string, number>,
): Record<string, number> | undefined {
  if (after.size === 0) return undefined;
  return Object.fromEntries([...after].map(([name, t]) => [name, (t - (before.get(name) ?? t)) / 100]));
}

/** The counts matching `keys` that grew by at least `min` between two readings. */
export function requestDelta(
  before: Map<string, number>,
  after: Map<string, number>,
  keys: RegExp,
  min: number,
): Array<readonly [string, number]> {
  return [...after]
    .map(([key, n]) => [key, n - (before.get(key) ?? 0)] as const)
    .filter(([key, n]) => n >= min && keys.test(key));
}
