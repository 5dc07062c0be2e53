// What the reconciler's parts share: the caches, the client, the event recorder and the options.
import type { V1Job, V1PersistentVolumeClaim, V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import type { StatefulSetMachine } from './api.ts';
import type { Informer, KubeClient, ObjectEventRecorder, VolumeBackup } from './basic-operator.ts';

export interface ProviderOptions {
  /** Image of the restore Jobs (--restore-job-image): basic-operator's, which holds the mover. */
  restoreJobImage: string;
  /** activeDeadlineSeconds of a restore Job (--restore-deadline). */
  restoreDeadlineSeconds: number;
}

export interface ProviderDeps extends ProviderOptions {
  client: KubeClient;
  machines: Informer<StatefulSetMachine>;
  /** Only objects with our machine label: the cache selections of controller.ts. */
  statefulSets: Informer<V1StatefulSet>;
  pods: Informer<V1Pod>;
  claims: Informer<V1PersistentVolumeClaim>;
  jobs: Informer<V1Job>;
  backups: Informer<VolumeBackup>;
  events: ObjectEventRecorder<StatefulSetMachine>;
  now?: () => Date;
}
