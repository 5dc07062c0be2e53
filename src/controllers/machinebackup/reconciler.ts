import {
  MACHINE,
  type Machine,
  VOLUME_BACKUP,
  VOLUME_BACKUP_FINALIZER,
  type VolumeBackup,
  type VolumeBackupReference,
} from '../../apis/index.ts';
import type { Informer } from '../../runtime/cache/informer.ts';
import { isNotFound } from '../../runtime/client/errors.ts';
import type { KubeClient } from '../../runtime/client/kube-client.ts';
import type { ReconcileContext, Reconciler, Request, Result } from '../../runtime/controller/reconciler.ts';
import type { EventType, ObjectEventRecorder } from '../../runtime/events/index.ts';
import { createIfAbsent } from '../../runtime/write/children.ts';
import { type ConditionInput, findCondition, setCondition } from '../../runtime/write/conditions.ts';
import { addFinalizer, removeFinalizer } from '../../runtime/write/finalizers.ts';
import { backupName } from '../shared/volume-backups.ts';
import { MACHINE_BACKUP_CONDITION, type MachinePlan, planMachine } from './logic/plan.ts';

export interface MachineBackupDeps {
  client: KubeClient;
  backups: Informer<VolumeBackup>;
  events: ObjectEventRecorder<Machine>;
  now?: () => Date;
}

/** Events for a Machine whose `VolumeBackup` condition takes this reason. */
const EVENT_FOR_REASON: Record<string, { type: EventType; reason: string } | undefined> = {
  BackupPending: { type: 'Normal', reason: 'BackupPending' },
  BackupFailed: { type: 'Warning', reason: 'BackupFailed' },
  BackupConflict: { type: 'Warning', reason: 'BackupConflict' },
  BackupSkipped: { type: 'Normal', reason: 'BackupSkipped' },
  BackupCompleted: { type: 'Normal', reason: 'BackupCompleted' },
};

/**
 * The second controller on Machines. It never touches a Machine's spec, pod or claims: it holds the
 * finalizer infra.basicoperator.dev/volume-backup on Machines whose backup policy is OnDelete, and
 * when such a Machine is deleted it waits for the Machine controller to report `Stopped`, records a
 * VolumeBackup (named after the Machine's name and uid, so it is never made twice), and releases the
 * Machine once that backup Completed. Its progress shows on the Machine as the `VolumeBackup`
 * condition, the only part of the Machine's status it writes.
 */
export class MachineBackupReconciler implements Reconciler<Machine> {
  private readonly deps: MachineBackupDeps;

  constructor(deps: MachineBackupDeps) {
    this.deps = deps;
  }

  async reconcile(request: Request, ctx: ReconcileContext<Machine>): Promise<Result | undefined> {
    const machine = ctx.object;
    if (!machine) return undefined;
    // What this controller last handed over (ctx.object has it): the cache may not show the record yet.
    const recorded = machine.status?.volumeBackup;
    const backup = this.deps.backups.get(request.namespace, recorded?.name ?? backupName(machine));
    const plan = planMachine(machine, backup, recorded);
    try {
      await this.execute(machine, plan, ctx);
    } catch (err) {
      // The Machine went away meanwhile: nothing is left to do for it.
      if (isNotFound(err)) return undefined;
      throw err;
    }
    return undefined;
  }

  private async execute(machine: Machine, plan: MachinePlan, ctx: ReconcileContext<Machine>): Promise<void> {
    const { client, events } = this.deps;
    switch (plan.action) {
      case 'none':
        return;
      case 'add-finalizer':
        await addFinalizer(client, MACHINE, machine, VOLUME_BACKUP_FINALIZER, { signal: ctx.signal });
        ctx.log.debug('added the volume-backup finalizer');
        return;
      case 'remove-finalizer': {
        if (plan.condition) {
          this.writeCondition(machine, plan.condition, ctx);
          // Its last condition is written before the Machine is let go: once released it may be gone.
          await ctx.status.flush(machine);
        }
        await removeFinalizer(client, MACHINE, machine, VOLUME_BACKUP_FINALIZER, { signal: ctx.signal });
        ctx.log.info('removed the volume-backup finalizer', { reason: plan.reason });
        events.normal(machine, {
          reason: 'FinalizerRemoved',
          action: 'RemoveFinalizer',
          note: `Removed finalizer ${VOLUME_BACKUP_FINALIZER}: ${plan.message}`,
        });
        return;
      }
      case 'wait':
        this.writeCondition(machine, plan.condition, ctx);
        return;
      case 'create-backup': {
        const created = await createIfAbsent(client, VOLUME_BACKUP, plan.backup, ctx.signal);
        // Taken: someone else's, or ours from a create whose answer was lost: either way not provably
        // ours, and the next reconcile, which sees it, says so (BackupConflict).
        if (!created) return;
        const name = created.metadata.name ?? '';
        ctx.log.info('created the VolumeBackup', { volumeBackup: name, uid: created.metadata.uid });
        events.normal(machine, {
          reason: 'BackupStarted',
          action: 'Backup',
          note: `Created VolumeBackup ${name} for ${plan.backup.spec.volumes.length} volumes`,
        });
        // The proof that this backup is the operator's: its uid, recorded at once (a crash before
        // this write leaves a backup the operator cannot prove is its own: BackupConflict).
        this.writeCondition(machine, plan.condition, ctx, { name, uid: created.metadata.uid ?? '' });
        await ctx.status.flush(machine);
        return;
      }
    }
  }

  /**
   * Sets the `VolumeBackup` condition, with an Event when its reason changes, and the record of the
   * operator's VolumeBackup (`record`, or the one already recorded: an apply drops what it omits).
   */
  private writeCondition(
    machine: Machine,
    condition: ConditionInput,
    ctx: ReconcileContext<Machine>,
    record?: VolumeBackupReference,
  ): void {
    const latest = machine.status;
    const conditions = latest?.conditions;
    const previous = findCondition(conditions, MACHINE_BACKUP_CONDITION);
    const next = setCondition(conditions, condition, this.deps.now?.() ?? new Date());
    const volumeBackup = record ?? latest?.volumeBackup;
    // Only these fields: the Machine controller owns the rest of the status (see the builder's apply).
    ctx.status.write(machine, {
      conditions: next.filter((c) => c.type === MACHINE_BACKUP_CONDITION),
      ...(volumeBackup ? { volumeBackup } : {}),
    });
    const event = EVENT_FOR_REASON[condition.reason];
    if (event && previous?.reason !== condition.reason) {
      this.deps.events.record(machine, {
        type: event.type,
        reason: event.reason,
        action: 'Backup',
        note: condition.message,
      });
    }
  }
}
