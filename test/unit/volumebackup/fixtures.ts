import type { V1Job } from '@kubernetes/client-node';
import type {
  Machine,
  MachineSpec,
  VolumeBackup,
  VolumeBackupStatus,
  VolumeManifest,
} from '../../../src/apis/index.ts';
import { COPY_REPORT_ANNOTATION } from '../../../src/controllers/volumebackup/names.ts';

export const UID = '0b7c9a52-1111-2222-3333-444455556666';

export function machine(spec: Partial<MachineSpec> = {}, meta: Partial<Machine['metadata']> = {}): Machine {
  return {
    apiVersion: 'infra.basicoperator.dev/v1alpha1',
    kind: 'Machine',
    metadata: { name: 'web', namespace: 'ns', uid: UID, generation: 1, resourceVersion: '10', ...meta },
    spec: {
      image: 'app:1',
      volumes: [
        { name: 'data', size: '1Gi', mountPath: '/data' },
        { name: 'logs', size: '1Gi', mountPath: '/logs' },
      ],
      ...spec,
    },
  };
}

export function backup(status?: VolumeBackupStatus): VolumeBackup {
  return {
    apiVersion: 'infra.basicoperator.dev/v1alpha1',
    kind: 'VolumeBackup',
    metadata: { name: 'web-0b7c9a52', namespace: 'ns', uid: 'vb-uid', generation: 1 },
    spec: {
      machineName: 'web',
      machineUID: UID,
      volumes: [
        { name: 'data', claimName: 'web-data' },
        { name: 'logs', claimName: 'web-logs' },
      ],
    },
    ...(status ? { status } : {}),
  };
}

/** A tree's manifest, as the mover measures one; `seed` makes distinct ones. */
export function manifest(seed = 1): VolumeManifest {
  return {
    files: 3 * seed,
    bytes: 4096 * seed,
    digest: `sha256:${seed.toString(16).padStart(2, '0').repeat(32)}`,
  };
}

/** What a copy pod writes as its termination message (src/mover/report.ts successLine). */
export function copyReport(source: VolumeManifest = manifest(), target: VolumeManifest = source): string {
  return JSON.stringify({ v: 1, source, target, copyMs: 2000, manifestMs: 500 });
}

/** The annotations of a copy Job whose verified report was recorded. */
export const REPORTED = { [COPY_REPORT_ANNOTATION]: copyReport() };

export function copyJob(
  volume: string,
  attempt: number,
  condition?: { type: 'Complete' | 'Failed'; at?: string; reason?: string; message?: string },
  annotations?: Record<string, string>,
): V1Job {
  return {
    metadata: {
      name: `web-0b7c9a52-${volume}-${attempt}`,
      labels: {
        'infra.basicoperator.dev/volume': volume,
        'infra.basicoperator.dev/attempt': String(attempt),
      },
      ...(annotations ? { annotations } : {}),
    },
    status: condition
      ? {
          conditions: [
            {
              type: condition.type,
              status: 'True',
              reason: condition.reason,
              message: condition.message,
              lastTransitionTime: (condition.at ?? '2025-01-01T00:00:00Z') as unknown as Date,
            },
          ],
        }
      : {},
  };
}
