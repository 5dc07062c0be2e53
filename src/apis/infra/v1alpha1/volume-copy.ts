// The data contract between the Machine controller (restores) and the VolumeBackup controller
// (backups): how a claim's content is copied into another claim. Both copy with the same pod, so a
// backup claim holds exactly the files of the Machine's volume and a restore puts them back.
import type { V1PodTemplateSpec } from '@kubernetes/client-node';

/** Copy everything, keeping owners, modes and times. */
export const VOLUME_COPY_COMMAND: readonly string[] = ['sh', '-c', 'cp -a /source/. /target/'];

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
      containers: [
        {
          name: 'copy',
          image,
          command: [...VOLUME_COPY_COMMAND],
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
