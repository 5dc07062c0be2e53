import { join } from 'node:path';
import type { V1Deployment } from '@kubernetes/client-node';
import { Agent, request } from 'undici';
import { commandLine, restartComponent } from '../../e2e/providers/local/components.ts';
import { clusterDir } from '../../e2e/providers/local/paths.ts';
import { procStats } from '../../e2e/support/operator-process.ts';
import { CoreTypes } from '../../src/runtime/client/resource.ts';
import type { MeasuredCluster } from '../cluster.ts';
import { log } from '../log.ts';
import { kcmStartup, processStartedAt } from '../measure/startup.ts';
import { type BenchSide, deploymentSpec, type SideController } from './side.ts';

/**
 * apps/v1 Deployments handled by the cluster's own kube-controller-manager. The bench sees its
 * process on the local provider only (kind runs it in a container): there it measures its CPU and
 * memory, the settled measures and a restart; on kind, the rollout alone.
 */
export function kcmSide(cluster: MeasuredCluster, replicas: number): BenchSide<V1Deployment> {
  const namespace = 'bench-kcm';
  return {
    name: 'kube-controller-manager',
    title: 'apps/v1 Deployments with kube-controller-manager',
    namespace,
    deployments: CoreTypes.Deployment,
    sets: CoreTypes.ReplicaSet,
    deployment: (i) => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: `d-${i}`, namespace },
      spec: deploymentSpec(i, replicas),
    }),
    isReady: (d) =>
      d.status?.observedGeneration === d.metadata?.generation &&
      d.status?.availableReplicas === replicas &&
      d.status?.updatedReplicas === replicas &&
      d.status?.replicas === replicas,
    work: {
      reconcileSeries: 'workqueue_work_duration_seconds_count',
      controllers: ['deployment', 'replicaset'],
    },
    start: async () => kcmProcess(cluster),
  };
}

function kcmProcess(cluster: MeasuredCluster): SideController {
  const pid = cluster.pid('kube-controller-manager');
  const local = cluster.local;
  return {
    pid,
    stats: () => (pid ? procStats(pid) : undefined),
    metrics: () => kcmMetrics(cluster),
    restart: pid && local !== undefined ? () => restartKcm(cluster, local) : undefined,
  };
}

/** Kills kube-controller-manager (SIGKILL, as kwokctl would restart it) and times its start again. */
async function restartKcm(cluster: MeasuredCluster, local: string) {
  log('  restarting kube-controller-manager (SIGKILL, as kwokctl would restart it)');
  const logFile = join(clusterDir(local), 'logs', 'kube-controller-manager.log');
  await restartComponent(local, 'kube-controller-manager');
  const newPid = cluster.pid('kube-controller-manager');
  if (!newPid) throw new Error('kube-controller-manager did not start again');
  return kcmStartup(logFile, newPid, processStartedAt(newPid));
}

/** kube-controller-manager's /metrics (its secure port lets /metrics through without authorization). */
async function kcmMetrics(cluster: MeasuredCluster): Promise<string> {
  const pid = cluster.pid('kube-controller-manager');
  const port =
    pid &&
    commandLine(pid)
      .find((a) => a.startsWith('--secure-port='))
      ?.split('=')[1];
  if (!port) return '';
  const response = await request(`https://127.0.0.1:${port}/metrics`, {
    dispatcher: new Agent({ connect: { rejectUnauthorized: false } }),
  });
  return response.body.text();
}
