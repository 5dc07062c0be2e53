import type { MeasuredCluster } from '../cluster.ts';
import type { SoakKinds } from './kinds.ts';
import { loadBetween, type OtherProcesses, type PhaseLoad, readLoad } from './machine-load.ts';
import { normalRollout, type RolloutFigures, type RolloutSettings } from './rollout.ts';
import { type HostileTenant, type TenantWork, workBetween } from './tenant.ts';

/** One phase's normal rollout, with the machine's load and the hostile tenant's work over it. */
export interface MeasuredRollout {
  from: number;
  to: number;
  figures: RolloutFigures;
  load: PhaseLoad;
  tenantWork: TenantWork & { seconds: number };
}

/** The normal rollout in `namespace`, measured: what the soak and its reference do in each phase. */
export async function measureRollout(
  cluster: MeasuredCluster,
  namespace: string,
  settings: RolloutSettings,
  kinds: SoakKinds,
  tenant: HostileTenant,
  processes: OtherProcesses,
): Promise<MeasuredRollout> {
  const work = tenant.work();
  const from = Date.now();
  const before = await readLoad(cluster, processes);
  const figures = await normalRollout(cluster, namespace, settings, kinds);
  const load = loadBetween(before, await readLoad(cluster, processes));
  const to = Date.now();
  return { from, to, figures, load, tenantWork: workBetween(work, tenant.work(), to - from) };
}
