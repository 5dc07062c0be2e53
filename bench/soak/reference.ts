import { sleep } from '../async.ts';
import type { MeasuredCluster } from '../cluster.ts';
import { log } from '../log.ts';
import { KCM_KINDS } from './kinds.ts';
import { describeLoad, type PhaseLoad } from './machine-load.ts';
import { measureRollout } from './measured.ts';
import { describeTenantObjects, figureRow } from './report.ts';
import type { RolloutFigures, RolloutSettings } from './rollout.ts';
import { HostileTenant, type TenantFigures, type TenantSettings, type TenantWork } from './tenant.ts';

/** Phases A and B with apps/v1 Deployments and kube-controller-manager: the reference's figures. */
export interface ReferenceFigures {
  controller: 'kube-controller-manager';
  baseline: RolloutFigures;
  hostile: RolloutFigures;
  load: { baseline: PhaseLoad; hostile: PhaseLoad };
  tenant: TenantFigures;
  tenantWork: TenantWork & { seconds: number };
}

export interface ReferenceNamespaces {
  baseline: string;
  hostile: string;
  tenant: string;
}

/**
 * The soak's phases A and B with the reference in the operator's place: the same normal rollout and
 * the same hostile tenant, in apps/v1 Deployments, handled by the cluster's kube-controller-manager
 * (no operator runs). Phase C has no counterpart: kube-controller-manager cannot be told to leave one
 * namespace alone.
 */
export async function referenceSoak(
  cluster: MeasuredCluster,
  namespaces: ReferenceNamespaces,
  rollout: RolloutSettings,
  tenantSettings: TenantSettings,
  warmupMs: number,
): Promise<ReferenceFigures> {
  const tenant = new HostileTenant(cluster, namespaces.tenant, tenantSettings, KCM_KINDS);
  const processes = () => ({ webhook: tenant.webhookPid });
  const measured = (namespace: string) =>
    measureRollout(cluster, namespace, rollout, KCM_KINDS, tenant, processes);
  try {
    log(`phase A (reference): a normal Deployment rollout alone, in ${namespaces.baseline}`);
    const a = await measured(namespaces.baseline);
    log(`phase B (reference): the hostile tenant, in Deployments, in ${namespaces.tenant}`);
    await tenant.start();
    log(`  the tenant at work for ${warmupMs / 1000}s before the rollout`);
    await sleep(warmupMs);
    log(`phase B (reference): the same rollout in ${namespaces.hostile}, beside the tenant`);
    const b = await measured(namespaces.hostile);
    return {
      controller: 'kube-controller-manager',
      baseline: a.figures,
      hostile: b.figures,
      load: { baseline: a.load, hostile: b.load },
      tenant: await tenant.stop(),
      tenantWork: b.tenantWork,
    };
  } finally {
    await tenant.removeWebhook();
  }
}

/** The reference's figures, A and B side by side with B/A, as the operator's soak prints them. */
export function referenceReport(figures: ReferenceFigures): string[] {
  const { baseline: a, hostile: b, tenant, tenantWork } = figures;
  const row = (what: string, pick: (r: RolloutFigures) => number | undefined, unit: string, digits = 0) => {
    const [x, y] = [pick(a) ?? Number.NaN, pick(b) ?? Number.NaN];
    return figureRow(what, [x, y], [y / x], unit, digits);
  };
  return [
    `soak, reference: apps/v1 Deployments with kube-controller-manager; a normal rollout of ${a.replicas} replicas alone (A, namespace ${a.namespace}) and beside the hostile tenant (B, namespace ${b.namespace})`,
    `${''.padEnd(34)} ${['A', 'B'].map((p) => p.padStart(12)).join(' ')} ${'B/A'.padStart(8)}`,
    row('create to all ready', (r) => r.createToReadySeconds, 's', 1),
    row('template change to all ready', (r) => r.changeToReadySeconds, 's', 1),
    row(`reaction p50 (${a.latency.changes} scale-ups)`, (r) => r.latency.p50Ms, 'ms'),
    row('reaction p99', (r) => r.latency.p99Ms, 'ms'),
    row('  to the deployment seen p99', (r) => r.latency.hops?.toDeployment.p99Ms, 'ms'),
    row("  the controllers' part p50", (r) => r.latency.controllers?.p50Ms, 'ms'),
    row("  the controllers' part p99", (r) => r.latency.controllers?.p99Ms, 'ms'),
    ...describeLoad('A', figures.load.baseline),
    ...describeLoad('B', figures.load.hostile),
    `hostile tenant: ${tenant.rounds} rounds, ${tenant.templateChanges} template changes; webhook refusals ${tenant.webhookCalls}`,
    `  over B's rollout (${tenantWork.seconds.toFixed(0)} s): ${tenantWork.templateChanges} template changes, ${tenantWork.webhookCalls} of its pods refused by the webhook`,
    ...describeTenantObjects(tenant),
  ];
}
