// The data contract between the providers (restores) and the VolumeBackup controller (backups): how
// a claim's content is copied into another claim and how the copy is proven. Both copy with the same
// pod, which runs the mover (src/mover) and reports a manifest of what it read and what it wrote, so
// a backup claim holds exactly the files of the Machine's volume, a restore puts them back, and every
// provider reads its copy Jobs' outcome the same way.
import type {
  V1ContainerStateTerminated,
  V1Job,
  V1Pod,
  V1PodSecurityContext,
  V1PodTemplateSpec,
  V1SecurityContext,
} from '@kubernetes/client-node';
import type { Kept, Shape } from '../../../runtime/cache/keep-fields.ts';
import { toMillis } from '../../../runtime/time.ts';
import { DEFAULT_MACHINE_USER } from './pod-fields.ts';
import type { VolumeCopyIdentity, VolumeManifest } from './volumebackup.ts';

/**
 * The mover (src/mover), in the operator's own image: the copy Jobs run that image, so the program
 * that copies and verifies is always the operator's own version. The path is the image's layout
 * (Dockerfile: WORKDIR /app, Node at /nodejs/bin/node); a custom --backup-job-image must keep it.
 */
export const MOVER_COMMAND: readonly string[] = ['/nodejs/bin/node', '/app/dist/mover/main.js'];

/** The container of a copy pod: its termination message is the mover's report (parseCopyReport). */
export const COPY_CONTAINER = 'copy';

const COPY_END = { exitCode: true, message: true } as const satisfies Shape<V1ContainerStateTerminated>;

/** What copyTermination reads of a pod: a cache that hands it pods keeps these fields. */
const COPY_TERMINATION_READS = {
  status: { containerStatuses: { name: 'shared', state: { terminated: COPY_END } } },
} as const satisfies Shape<V1Pod>;

/** How a copy pod's copy container ended, if its status shows that yet: its exit code and report. */
export function copyTermination(
  pod: Kept<V1Pod, typeof COPY_TERMINATION_READS>,
): Kept<V1ContainerStateTerminated, typeof COPY_END> | undefined {
  return pod.status?.containerStatuses?.find((c) => c.name === COPY_CONTAINER)?.state?.terminated;
}

/** The uid and gid of copies that may not run as root and are told no one else to run as. */
export const VOLUME_COPY_USER = 65532;

/**
 * The capabilities a root copy keeps (every other one is dropped): chown (CHOWN), read and write
 * whatever the files' modes say (DAC_OVERRIDE), set modes and times of files it does not own
 * (FOWNER), keep setuid and setgid bits (FSETID). Pod Security `baseline` allows each of them.
 */
export const ROOT_COPY_CAPABILITIES: readonly string[] = ['CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID'];

/**
 * Who a copy runs as. `root` preserves every owner, group and mode. Where the namespace's Pod
 * Security level refuses root (`restricted`), `nonroot` runs as `uid`:`gid` (the workload's user and
 * group), with `fsGroup` (the workload's) as one more group, and copies only trees whose every
 * entry is its own; anything else fails with a reason that names `level` and the first entries
 * concerned, never with silently changed owners.
 */
export type CopyPrivilege =
  | { mode: 'root' }
  | { mode: 'nonroot'; uid: number; gid: number; fsGroup?: number; level: string };

/**
 * Whom a copy of the volumes of a pod with these security contexts runs as when it may not run as
 * root: the user and group the container runs as (its securityContext's runAsUser/runAsGroup over
 * the pod's, as the kubelet applies them) and the pod's fsGroup, each DEFAULT_MACHINE_USER when not
 * named (as a Machine's pod runs). Undefined for a container that runs as root: no non-root copy
 * keeps its files.
 */
export function copyIdentityOf(fields: {
  podSecurityContext?: V1PodSecurityContext;
  securityContext?: V1SecurityContext;
}): VolumeCopyIdentity | undefined {
  const pod = fields.podSecurityContext;
  const container = fields.securityContext;
  const runAsUser = container?.runAsUser ?? pod?.runAsUser ?? DEFAULT_MACHINE_USER;
  if (runAsUser === 0) return undefined;
  return {
    runAsUser,
    runAsGroup: container?.runAsGroup ?? pod?.runAsGroup ?? DEFAULT_MACHINE_USER,
    fsGroup: pod?.fsGroup ?? DEFAULT_MACHINE_USER,
  };
}

export interface VolumeCopy {
  image: string;
  sourceClaim: string;
  targetClaim: string;
  labels: Record<string, string>;
  privilege: CopyPrivilege;
  /** A restore: the restored tree must equal this manifest (the backup's), not only its source. */
  expect?: VolumeManifest;
}

/** The mover's arguments for `copy`. */
export function moverArgs(copy: Pick<VolumeCopy, 'privilege' | 'expect'>): string[] {
  const { privilege, expect } = copy;
  return [
    'copy',
    '--source',
    '/source',
    '--target',
    '/target',
    ...(expect ? ['--expect', `${expect.files}:${expect.bytes}:${expect.digest}`] : []),
    ...(privilege.mode === 'nonroot' ? ['--pod-security-level', privilege.level] : []),
  ];
}

function securityContexts(privilege: CopyPrivilege): {
  pod: V1PodSecurityContext;
  container: V1SecurityContext;
} {
  const seccompProfile = { type: 'RuntimeDefault' };
  if (privilege.mode === 'root') {
    return {
      pod: { runAsNonRoot: false, runAsUser: 0, runAsGroup: 0, seccompProfile },
      container: {
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'], add: [...ROOT_COPY_CAPABILITIES] },
        readOnlyRootFilesystem: true,
      },
    };
  }
  // The source is mounted read-only, which the kubelet never applies an fsGroup to; the target, a
  // new claim, gets the workload's fsGroup as the workload's own volume got it (its root's group
  // and mode, where the storage lets the kubelet manage them), so the two roots match.
  const fsGroup =
    privilege.fsGroup === undefined
      ? {}
      : { fsGroup: privilege.fsGroup, fsGroupChangePolicy: 'OnRootMismatch' };
  return {
    pod: {
      runAsNonRoot: true,
      runAsUser: privilege.uid,
      runAsGroup: privilege.gid,
      ...fsGroup,
      seccompProfile,
    },
    container: {
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      readOnlyRootFilesystem: true,
    },
  };
}

/**
 * The pod of a copy Job: `source` mounted read-only at /source, `target` at /target, the mover run
 * on them. It reports the two manifests in its termination message (parseCopyReport), or why it
 * failed; FallbackToLogsOnError hands back its last log lines when it could not write one.
 */
export function volumeCopyPodTemplate(copy: VolumeCopy): V1PodTemplateSpec {
  const { pod, container } = securityContexts(copy.privilege);
  return {
    metadata: { labels: copy.labels },
    spec: {
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      securityContext: pod,
      containers: [
        {
          name: COPY_CONTAINER,
          image: copy.image,
          command: [...MOVER_COMMAND],
          args: moverArgs(copy),
          terminationMessagePolicy: 'FallbackToLogsOnError',
          securityContext: container,
          volumeMounts: [
            { name: 'source', mountPath: '/source', readOnly: true },
            { name: 'target', mountPath: '/target' },
          ],
        },
      ],
      volumes: [
        { name: 'source', persistentVolumeClaim: { claimName: copy.sourceClaim, readOnly: true } },
        { name: 'target', persistentVolumeClaim: { claimName: copy.targetClaim } },
      ],
    },
  };
}

/**
 * The Pod Security level named by a refusal of kube-apiserver's PodSecurity admission (`violates
 * PodSecurity "restricted:latest": ...`), or undefined when the message is not one.
 */
export function podSecurityLevelOfRefusal(message: string): string | undefined {
  return /violates PodSecurity "([a-z]+)(?::[^"]*)?"/.exec(message)?.[1];
}

/**
 * Who a copy may run as, given why admission refused a root copy pod (undefined: it admits one). A
 * Pod Security refusal leaves the non-root copy, as `as` (the workload's identity; uid and gid
 * VOLUME_COPY_USER when not known); any other refusal (a quota, a webhook) is no reason to give up
 * owners, so the copy stays root and its Job reports the refusal.
 */
export function copyPrivilege(
  rootRefusal: string | undefined,
  as: VolumeCopyIdentity | undefined,
): CopyPrivilege {
  const level = rootRefusal === undefined ? undefined : podSecurityLevelOfRefusal(rootRefusal);
  if (level === undefined) return { mode: 'root' };
  if (!as) return { mode: 'nonroot', uid: VOLUME_COPY_USER, gid: VOLUME_COPY_USER, level };
  return {
    mode: 'nonroot',
    uid: as.runAsUser,
    gid: as.runAsGroup,
    ...(as.fsGroup !== undefined ? { fsGroup: as.fsGroup } : {}),
    level,
  };
}

/** Who a copy runs as, for messages: `as root`, `as uid 999, gid 999, fsGroup 65532`. */
export function describeCopyPrivilege(privilege: CopyPrivilege): string {
  if (privilege.mode === 'root') return 'as root';
  const fsGroup = privilege.fsGroup === undefined ? '' : `, fsGroup ${privilege.fsGroup}`;
  return `as uid ${privilege.uid}, gid ${privilege.gid}${fsGroup}`;
}

/** A pod of `template` to ask admission about (a dry run) in `namespace`. */
export function copyPodProbe(
  template: V1PodTemplateSpec,
  namespace: string | undefined,
  generateName: string,
): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { generateName, ...(namespace ? { namespace } : {}), labels: template.metadata?.labels ?? {} },
    spec: template.spec!,
  };
}

/** What a copy pod reported on success: the manifests of the tree it read and the tree it wrote. */
export interface CopyReport {
  source: VolumeManifest;
  target: VolumeManifest;
  copyMs?: number;
  manifestMs?: number;
}

function manifestOf(value: unknown): VolumeManifest | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { files, bytes, digest } = value as Record<string, unknown>;
  if (!Number.isSafeInteger(files) || !Number.isSafeInteger(bytes)) return undefined;
  if (typeof digest !== 'string' || !/^sha256:[0-9a-f]{64}$/.test(digest)) return undefined;
  return { files: files as number, bytes: bytes as number, digest };
}

/** A copy pod's termination message as a CopyReport; undefined when it is not one (a failure's text). */
export function parseCopyReport(message: string | undefined): CopyReport | undefined {
  if (!message) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(message.trim());
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const record = parsed as Record<string, unknown>;
  if (record.v !== 1) return undefined;
  const source = manifestOf(record.source);
  const target = manifestOf(record.target);
  if (!source || !target) return undefined;
  const ms = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? { value: v } : undefined);
  const copyMs = ms(record.copyMs);
  const manifestMs = ms(record.manifestMs);
  return {
    source,
    target,
    ...(copyMs ? { copyMs: copyMs.value } : {}),
    ...(manifestMs ? { manifestMs: manifestMs.value } : {}),
  };
}

export function sameManifest(a: VolumeManifest | undefined, b: VolumeManifest | undefined): boolean {
  return (
    a !== undefined && b !== undefined && a.files === b.files && a.bytes === b.bytes && a.digest === b.digest
  );
}

export function describeManifest(m: VolumeManifest): string {
  return `${m.files} files, ${m.bytes} bytes, ${m.digest}`;
}

export type JobOutcome =
  | { done: 'succeeded' }
  /** `failedAt`: when it failed (ms since the epoch), if the Job says. */
  | { done: 'failed'; message: string; failedAt?: number }
  | undefined;

/** What jobOutcome reads of a Job: a cache that hands it Jobs keeps these fields (its `reads` spread them). */
export const JOB_OUTCOME_READS = {
  status: {
    conditions: {
      type: 'shared',
      status: 'shared',
      reason: 'shared',
      message: 'shared',
      lastTransitionTime: 'shared',
    },
    completionTime: true,
  },
} as const satisfies Shape<V1Job>;

/** Whether a copy Job finished, from its Complete and Failed conditions. */
export function jobOutcome(job: Kept<V1Job, typeof JOB_OUTCOME_READS>): JobOutcome {
  const conditions = job.status?.conditions ?? [];
  if (conditions.some((c) => c.type === 'Complete' && c.status === 'True')) return { done: 'succeeded' };
  const failed = conditions.find((c) => c.type === 'Failed' && c.status === 'True');
  if (failed) {
    const why = [failed.reason, failed.message].filter(Boolean).join(': ');
    const failedAt = toMillis(failed.lastTransitionTime) ?? toMillis(job.status?.completionTime);
    return {
      done: 'failed',
      message: why || 'the Job failed',
      ...(failedAt !== undefined ? { failedAt } : {}),
    };
  }
  return undefined;
}
