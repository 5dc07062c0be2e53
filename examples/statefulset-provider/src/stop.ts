// The contract's stop handshake: on the stop-requested annotation the StatefulSet goes to 0 replicas
// and never back up, the claims stay (whenScaled: Retain), and `stopped` is reported only once the
// API server itself (not the cache) shows the pod gone, the StatefulSet settled at 0 and no restore
// still writing into a claim. The VolumeBackup controller copies the claims as soon as it reads it.
import type { V1Job, V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import type { StatefulSetMachine } from './api.ts';
import {
  CoreTypes,
  isBeingDeleted,
  isControlledBy,
  jobOutcome,
  type MachineVolumeStatus,
} from './basic-operator.ts';
import type { ProviderDeps } from './deps.ts';
import type { Kube } from './kube.ts';
import { claimName, MACHINE_LABEL, podName, restoreJobName, statefulSetName } from './names.ts';
import { STATEFUL_SET, volumes } from './statefulset.ts';
import type { Observations } from './status.ts';

/** Facts read live from the API server during a stop (pure input of stopVerdict). */
export interface StopFacts {
  /** Our StatefulSet, if there is one. */
  statefulSet: V1StatefulSet | undefined;
  /** Pod `<name>-0` carrying our label, if the API server still has it. */
  pod: V1Pod | undefined;
  /** Restore Jobs of ours that have not finished. */
  copying: V1Job[];
}

/** Stopped, or what is still running. */
export function stopVerdict(
  machine: StatefulSetMachine,
  facts: StopFacts,
): { stopped: boolean; message: string } {
  const set = facts.statefulSet;
  if (facts.pod) {
    const state = isBeingDeleted(facts.pod) ? 'terminating' : 'still running';
    return { stopped: false, message: `stop requested: pod ${podName(machine)} is ${state}` };
  }
  if (set && !statefulSetSettledAtZero(set)) {
    return {
      stopped: false,
      message: `stop requested: waiting for kube-controller-manager to scale StatefulSet ${statefulSetName(machine)} to 0 replicas`,
    };
  }
  if (facts.copying.length > 0) {
    const names = facts.copying.map((j) => j.metadata?.name).join(', ');
    return { stopped: false, message: `stop requested: waiting for restore Jobs ${names} to stop` };
  }
  return {
    stopped: true,
    message: set
      ? `StatefulSet ${statefulSetName(machine)} is at 0 replicas and pod ${podName(machine)} is gone; the claims are kept`
      : 'stopped before anything ran; the claims made so far are kept',
  };
}

/**
 * kube-controller-manager has seen the scale-down (observedGeneration) and counts no pod: it will
 * not create the pod again, even from a view older than the pod's deletion.
 */
function statefulSetSettledAtZero(set: V1StatefulSet): boolean {
  const observed = set.status?.observedGeneration ?? 0;
  return (
    set.spec?.replicas === 0 &&
    observed >= (set.metadata?.generation ?? 0) &&
    (set.status?.replicas ?? 0) === 0
  );
}

export class Stopper {
  private readonly deps: ProviderDeps;
  private readonly kube: Kube;

  constructor(deps: ProviderDeps, kube: Kube) {
    this.deps = deps;
    this.kube = kube;
  }

  /** Scales down, stops restores, and reads back what still runs. */
  async stop(machine: StatefulSetMachine): Promise<Observations> {
    const ns = machine.metadata.namespace ?? '';
    const live = await this.kube.get(STATEFUL_SET, ns, statefulSetName(machine));
    let set = live && isControlledBy(live, machine) ? live : undefined;
    if (set && set.spec?.replicas !== 0) {
      set = await this.kube.mergePatch(STATEFUL_SET, set, { spec: { replicas: 0 } });
      this.deps.events.normal(machine, {
        reason: 'Stopping',
        action: 'Stop',
        note: `Stop requested: scaled StatefulSet ${statefulSetName(machine)} to 0 replicas; the claims are kept`,
      });
    }
    const copying = await this.stopRestores(machine);
    const pod = await this.kube.get(CoreTypes.Pod, ns, podName(machine));
    const facts: StopFacts = {
      statefulSet: set,
      pod: pod?.metadata?.labels?.[MACHINE_LABEL] === machine.metadata.name ? pod : undefined,
      copying,
    };
    return {
      observation: { kind: 'stopping', ...stopVerdict(machine, facts) },
      volumes: await this.keptClaims(machine),
    };
  }

  /** Deletes the restore Jobs still copying (foreground: a Job stays until its pods are gone). */
  private async stopRestores(machine: StatefulSetMachine): Promise<V1Job[]> {
    const ns = machine.metadata.namespace ?? '';
    const copying: V1Job[] = [];
    for (const volume of volumes(machine)) {
      if (!volume.restoreFrom) continue;
      const job = await this.kube.get(CoreTypes.Job, ns, restoreJobName(machine, volume));
      if (!job || !isControlledBy(job, machine) || jobOutcome(job) !== undefined) continue;
      if (!isBeingDeleted(job)) await this.kube.delete(CoreTypes.Job, job, 'Foreground');
      copying.push(job);
    }
    return copying;
  }

  /**
   * The claims that exist, read live: what a backup copies. A volume whose claim was never made
   * holds no data and is left out, rather than sending the backup after a claim that is not there.
   */
  private async keptClaims(machine: StatefulSetMachine): Promise<MachineVolumeStatus[]> {
    const ns = machine.metadata.namespace ?? '';
    const kept: MachineVolumeStatus[] = [];
    for (const volume of volumes(machine)) {
      const name = claimName(machine, volume);
      const claim = await this.kube.get(CoreTypes.PersistentVolumeClaim, ns, name);
      if (!claim || claim.metadata?.labels?.[MACHINE_LABEL] !== machine.metadata.name) continue;
      kept.push({
        name: volume.name,
        claimName: name,
        ...(claim.status?.phase ? { phase: claim.status.phase } : {}),
      });
    }
    return kept;
  }
}
