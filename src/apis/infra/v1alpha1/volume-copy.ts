// The data contract between the Machine controller (restores) and the VolumeBackup controller
// (backups): how a claim's content is copied into another claim. Both copy with the same pod, so a
// backup claim holds exactly the files of the Machine's volume and a restore puts them back; every
// provider reads its copy Jobs' outcome the same way.
import type { V1Job, V1PodTemplateSpec } from '@kubernetes/client-node';
import { toMillis } from '../../../runtime/time.ts';

/** Copy everything, keeping owners, modes and times. */
export const VOLUME_COPY_COMMAND: readonly string[] = ['sh', '-c', 'cp -a /source/. /target/'];

/**
 * The uid and gid copies run as (the conventional "nonroot" of distroless images). Copies never run
 * as root, so they pass the Pod Security `restricted` profile; fsGroup makes the target claim
 * writable for this user. What this costs: ownership is not preserved (copied files belong to this
 * uid and gid, with their modes and times kept), and a file this user cannot read fails the copy.
 */
export const VOLUME_COPY_USER = 65532;

/** The pod of a copy Job: `source` mounted read-only at /source, `target` at /target. */
export function volumeCopyPodTemplate(
  image: string,
  sourceClaim: string,
  targetClaim: string,
  labels: Record<string, string>,
): V1PodTemplateSpec {
  return {
    metadata: { labels },
    spec: {
      restartPolicy: 'Never',
      securityContext: {
        runAsNonRoot: true,
        runAsUser: VOLUME_COPY_USER,
        runAsGroup: VOLUME_COPY_USER,
        fsGroup: VOLUME_COPY_USER,
        seccompProfile: { type: 'RuntimeDefault' },
      },
      containers: [
        {
          name: 'copy',
          image,
          command: [...VOLUME_COPY_COMMAND],
          securityContext: {
            allowPrivilegeEscalation: false,
            capabilities: { drop: ['ALL'] },
            readOnlyRootFilesystem: true,
          },
          volumeMounts: [
            { name: 'source', mountPath: '/source', readOnly: true },
            { name: 'target', mountPath: '/target' },
          ],
        },
      ],
      volumes: [
        { name: 'source', persistentVolumeClaim: { claimName: sourceClaim, readOnly: true } },
        { name: 'target', persistentVolumeClaim: { claimName: targetClaim } },
      ],
    },
  };
}

export type JobOutcome =
  | { done: 'succeeded' }
  /** `failedAt`: when it failed (ms since the epoch), if the Job says. */
  | { done: 'failed'; message: string; failedAt?: number }
  | undefined;

/** Whether a copy Job finished, from its Complete and Failed conditions. */
export function jobOutcome(job: V1Job): JobOutcome {
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
