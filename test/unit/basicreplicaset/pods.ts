import type { V1Pod } from '@kubernetes/client-node';

export interface PodOptions {
  uid?: string;
  node?: string;
  phase?: string;
  /** Ready since this time (epoch ms); `true` for ready with no known time; undefined for not ready. */
  readySince?: number | true;
  created?: number;
  restarts?: number[];
  deletionCost?: string;
  deleting?: boolean;
}

/** A pod as the API returns it, built from the few facts the replica set logic reads. */
export function pod(name: string, options: PodOptions = {}): V1Pod {
  const annotations =
    options.deletionCost === undefined
      ? undefined
      : { 'controller.kubernetes.io/pod-deletion-cost': options.deletionCost };
  const ready =
    options.readySince === undefined
      ? { type: 'Ready', status: 'False' }
      : options.readySince === true
        ? { type: 'Ready', status: 'True' }
        : { type: 'Ready', status: 'True', lastTransitionTime: new Date(options.readySince) };
  return {
    metadata: {
      name,
      uid: options.uid ?? name,
      annotations,
      creationTimestamp: options.created === undefined ? undefined : new Date(options.created),
      deletionTimestamp: options.deleting ? new Date(0) : undefined,
    },
    spec: { containers: [{ name: 'app' }], nodeName: options.node },
    status: {
      phase: options.phase ?? 'Running',
      conditions: [{ type: 'PodScheduled', status: 'True' }, ready],
      containerStatuses: (options.restarts ?? [0]).map((restartCount, index) => ({
        name: `c${index}`,
        image: 'app',
        imageID: '',
        ready: options.readySince !== undefined,
        restartCount,
      })),
    },
  };
}
