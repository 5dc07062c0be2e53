import type { Machine, MachineSpec } from '../../../src/apis/index.ts';

export function machine(spec: Partial<MachineSpec> = {}, name = 'web'): Machine {
  return {
    apiVersion: 'infra.basicoperator.dev/v1alpha1',
    kind: 'Machine',
    metadata: { name, namespace: 'ns', uid: '0b7c9a52-1111-2222-3333-444455556666', generation: 3 },
    spec: {
      image: 'app:1',
      volumes: [
        { name: 'data', size: '1Gi', mountPath: '/data' },
        { name: 'logs', size: 1048576, mountPath: '/logs', storageClassName: 'fast' },
      ],
      ...spec,
    },
  };
}
