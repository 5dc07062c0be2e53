// Restoring a volume from a VolumeBackup before the StatefulSet exists: where a restore stands (pure)
// and the Job that copies the backup claim into the volume's claim. The copy is the project's mover,
// and a restore is done only when its copy pod's report proves the restored tree equal to the
// manifest the backup recorded: the StatefulSet's pod never starts on unproven data.
import type { V1Job, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { STATEFULSET_MACHINE, type StatefulSetMachine } from './api.ts';
import {
  type CopyPrivilege,
  controllerReference,
  copyPodProbe,
  copyTermination,
  describeManifest,
  jobOutcome,
  type MachineVolume,
  parseCopyReport,
  restoreSource,
  sameManifest,
  type VolumeBackup,
  type VolumeManifest,
  volumeCopyPodTemplate,
} from './basic-operator.ts';
import {
  COPY_ROLE_LABEL,
  claimName,
  RESTORED_FROM_ANNOTATION,
  ROLE_LABEL,
  restoredFromValue,
  restoreJobName,
  volumeLabels,
} from './names.ts';

/** Pod-level retries of a restore Job before it counts as failed. */
export const RESTORE_BACKOFF_LIMIT = 3;
/** How much of a failed copy's last words a message carries (the end: the last lines say why). */
const COPY_OUTPUT_MAX_CHARS = 1500;

export type RestoreState =
  /** The volume has no restoreFrom. */
  | { kind: 'none' }
  /** The claim carries RESTORED_FROM_ANNOTATION: done, whatever becomes of the Job or the backup. */
  | { kind: 'restored' }
  /**
   * The restore Job succeeded and its copy pod's report proves the restored tree (`manifest`): mark
   * the claim, then delete the Job. `checked`: against the manifest the backup recorded; false for a
   * backup from before copies were verified (the mover checked the copy against its source only).
   */
  | { kind: 'verified'; jobName: string; manifest: VolumeManifest; checked: boolean }
  /** The backup is Completed: make the claim (if missing) and the Job copying this backup claim. */
  | { kind: 'start'; backupClaimName: string; manifest?: VolumeManifest }
  | { kind: 'copying'; message: string }
  /** The VolumeBackup is missing or not Completed yet: waiting, not failed. */
  | { kind: 'waiting'; reason: 'BackupNotFound' | 'WaitingForBackup'; message: string }
  /** Terminal: nothing changes this without a person. `copyOutput`: a failed copy's last words. */
  | {
      kind: 'failed';
      reason:
        | 'BackupFailed'
        | 'BackupVolumeNotFound'
        | 'BackupClaimLost'
        | 'RestoreFailed'
        | 'RestoreVerificationFailed';
      message: string;
      copyOutput?: string;
    };

/** What the provider knows of one restoring volume. */
export interface RestoreObservation {
  claim: V1PersistentVolumeClaim | undefined;
  backup: VolumeBackup | undefined;
  job: V1Job | undefined;
  /** The Job's pods (they are kept until the Job goes, so they keep the copy's report). */
  jobPods: readonly V1Pod[];
  /** Backup claims by name, read live (they are not the provider's, so not in its cache). */
  backupClaim: (name: string) => V1PersistentVolumeClaim | undefined;
}

/** The newest pod whose copy ended as its Job did (exit code 0 for a success). */
function reportingPod(succeeded: boolean, pods: readonly V1Pod[]): V1Pod | undefined {
  return [...pods]
    .sort((a, b) =>
      String(b.metadata?.creationTimestamp ?? '').localeCompare(String(a.metadata?.creationTimestamp ?? '')),
    )
    .find((pod) => {
      const ended = copyTermination(pod);
      return ended !== undefined && (ended.exitCode === 0) === succeeded;
    });
}

/**
 * Whether the cached pods cannot tell how the finished `job` ended (the pods' watch may be behind the
 * Job's): the caller lists them live before judging.
 */
export function needsLivePods(job: V1Job | undefined, pods: readonly V1Pod[]): boolean {
  const outcome = job && jobOutcome(job);
  return outcome !== undefined && reportingPod(outcome.done === 'succeeded', pods) === undefined;
}

export function isRestored(volume: MachineVolume, claim: V1PersistentVolumeClaim | undefined): boolean {
  const source = volume.restoreFrom;
  return (
    source !== undefined &&
    claim?.metadata?.annotations?.[RESTORED_FROM_ANNOTATION] === restoredFromValue(source)
  );
}

/** The end of a termination message, whole lines, at most COPY_OUTPUT_MAX_CHARS. */
function lastWords(message: string | undefined): string | undefined {
  const text = message?.trim();
  if (!text) return undefined;
  if (text.length <= COPY_OUTPUT_MAX_CHARS) return text;
  const tail = text.slice(-COPY_OUTPUT_MAX_CHARS);
  const newline = tail.indexOf('\n');
  return `...${newline >= 0 && newline < tail.length - 1 ? tail.slice(newline + 1) : tail}`;
}

export function restoreState(volume: MachineVolume, observed: RestoreObservation): RestoreState {
  const source = volume.restoreFrom;
  if (!source) return { kind: 'none' };
  const { claim, backup, job } = observed;
  if (isRestored(volume, claim)) return { kind: 'restored' };
  const what = `volume ${volume.name} restores from VolumeBackup ${source.volumeBackup}`;
  if (job) {
    const jobName = job.metadata?.name ?? '';
    const outcome = jobOutcome(job);
    if (!outcome) return { kind: 'copying', message: `${what}: copying the data (Job ${jobName})` };
    if (outcome.done === 'failed') {
      const output = lastWords(copyTermination(reportingPod(false, observed.jobPods) ?? {})?.message);
      return {
        kind: 'failed',
        reason: 'RestoreFailed',
        message: `${what}: restore Job ${jobName} failed (${outcome.message})${output ? `; its copy pod said: ${output}` : ''}; delete the Job to try again`,
        ...(output ? { copyOutput: output } : {}),
      };
    }
    return verify(`${what}: restore Job ${jobName} succeeded, but`, jobName, source.volume, observed);
  }
  const offered = restoreSource(what, source, backup, observed.backupClaim);
  if (offered.kind !== 'ready') return offered;
  return {
    kind: 'start',
    backupClaimName: offered.backupClaimName,
    ...(offered.manifest ? { manifest: offered.manifest } : {}),
  };
}

/** A succeeded restore Job: its copy pod's report against the manifest the backup recorded. */
function verify(what: string, jobName: string, volume: string, observed: RestoreObservation): RestoreState {
  const unproven = (why: string): RestoreState => ({
    kind: 'failed',
    reason: 'RestoreVerificationFailed',
    message: `${what} ${why}; the StatefulSet is not created on unproven data; delete the Job to try again`,
  });
  const pod = reportingPod(true, observed.jobPods);
  if (!pod) return unproven('its copy pod is gone and left no report of what it restored');
  const message = copyTermination(pod)?.message;
  const report = parseCopyReport(message);
  if (!report) {
    const said = message?.trim() ? `"${lastWords(message)?.slice(0, 200)}"` : 'no termination message';
    return unproven(`the report of its copy pod ${pod.metadata?.name} cannot be read (${said})`);
  }
  const backedUp = observed.backup?.status?.volumes?.find((v) => v.name === volume);
  if (!backedUp) {
    return unproven(
      `the VolumeBackup ${observed.backup ? `no longer lists volume ${volume}` : 'no longer exists'}, so the restored tree cannot be checked against its manifest`,
    );
  }
  if (!backedUp.manifest) {
    if (!sameManifest(report.source, report.target)) {
      return unproven(
        `the restored tree differs from the backup claim it was copied from: source ${describeManifest(report.source)}, restored ${describeManifest(report.target)}`,
      );
    }
    return { kind: 'verified', jobName, manifest: report.target, checked: false };
  }
  if (!sameManifest(report.target, backedUp.manifest)) {
    return unproven(
      `the restored tree does not match the backup: expected ${describeManifest(backedUp.manifest)}, found ${describeManifest(report.target)}`,
    );
  }
  return { kind: 'verified', jobName, manifest: report.target, checked: true };
}

/** How a restore copies: from which backup claim, with what image, as whom, checked against what. */
export interface RestoreCopy {
  backupClaimName: string;
  /** basic-operator's image, which holds the mover (--restore-job-image). */
  image: string;
  activeDeadlineSeconds: number;
  privilege: CopyPrivilege;
  /** The backup's verified manifest of the volume: the mover checks the restored tree against it. */
  expect?: VolumeManifest;
}

function restoreLabels(machine: StatefulSetMachine, volume: MachineVolume): Record<string, string> {
  // COPY_ROLE_LABEL marks it as a copy pod of the project, as the operator's own are marked.
  return { ...volumeLabels(machine, volume), [ROLE_LABEL]: 'restore', [COPY_ROLE_LABEL]: 'restore' };
}

function restorePodTemplate(machine: StatefulSetMachine, volume: MachineVolume, copy: RestoreCopy) {
  return volumeCopyPodTemplate({
    image: copy.image,
    sourceClaim: copy.backupClaimName,
    targetClaim: claimName(machine, volume),
    labels: restoreLabels(machine, volume),
    privilege: copy.privilege,
    ...(copy.expect ? { expect: copy.expect } : {}),
  });
}

/**
 * Copies the backup claim into the volume's claim with the project's volume-copy pod (the one the
 * VolumeBackup controller backs up with), which checks the restored tree against `expect`.
 * activeDeadlineSeconds ends a copy that cannot run or hangs: the Job fails and the restore is a
 * terminal failure instead of a wait without end.
 */
export function desiredRestoreJob(
  machine: StatefulSetMachine,
  volume: MachineVolume,
  copy: RestoreCopy,
): V1Job {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: restoreJobName(machine, volume),
      namespace: machine.metadata.namespace,
      labels: restoreLabels(machine, volume),
      ownerReferences: [controllerReference(machine, STATEFULSET_MACHINE)],
    },
    spec: {
      backoffLimit: RESTORE_BACKOFF_LIMIT,
      activeDeadlineSeconds: copy.activeDeadlineSeconds,
      template: restorePodTemplate(machine, volume, copy),
    },
  };
}

/**
 * The restore's copy pod as root, for admission to judge with a dry run before the Job is made
 * (copyPrivilege reads the answer): where Pod Security refuses it, the copy runs as non-root.
 */
export function restoreProbePod(
  machine: StatefulSetMachine,
  volume: MachineVolume,
  copy: Omit<RestoreCopy, 'privilege'>,
): V1Pod {
  return copyPodProbe(
    restorePodTemplate(machine, volume, { ...copy, privilege: { mode: 'root' } }),
    machine.metadata.namespace,
    `${restoreJobName(machine, volume)}-`,
  );
}
