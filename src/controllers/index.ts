import { MANAGED_BY_LABEL, MANAGED_BY_VALUE } from '../apis/index.ts';
import type { CacheOptions } from '../runtime/cache/informer-cache.ts';
import { keepFields, StringPool } from '../runtime/cache/keep-fields.ts';
import { CoreTypes, resourceId } from '../runtime/client/resource.ts';
import type { Manager, ManagerOptions } from '../runtime/manager/manager.ts';
import { registerBasicDeploymentController } from './basicdeployment/index.ts';
import { registerBasicReplicaSetController } from './basicreplicaset/index.ts';
import { CLAIM_FIELDS, JOB_FIELDS, podTransform } from './cache-transforms.ts';
import type { OperatorOptions } from './flags.ts';
import { registerMachineController } from './machine/index.ts';
import { registerPodMachineController } from './podmachine/index.ts';
import { registerVolumeBackupController } from './volumebackup/index.ts';

const MANAGED_BY_SELECTOR = `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}`;

/** One pool for every transform: a PodMachine's pod, claims and Jobs share its name and labels. */
const sharedStrings = new StringPool();

/**
 * What the operator's cache holds unless a controller asks for another selection: of Pods, claims
 * and Jobs only those built from the operator's own manifests (PodMachine pods, claims, backup and
 * restore Jobs), so memory follows what it manages. The BasicReplicaSet controller asks for its
 * pods by its own marker label (see its index.ts). Of each of these objects, whatever selection
 * it is cached in, only the fields some controller reads (cache-transforms.ts).
 */
const operatorCacheOptions: CacheOptions = {
  byObject: {
    [resourceId(CoreTypes.Pod)]: {
      labelSelector: MANAGED_BY_SELECTOR,
      transform: podTransform(sharedStrings),
    },
    [resourceId(CoreTypes.PersistentVolumeClaim)]: {
      labelSelector: MANAGED_BY_SELECTOR,
      transform: keepFields(CLAIM_FIELDS, sharedStrings),
    },
    [resourceId(CoreTypes.Job)]: {
      labelSelector: MANAGED_BY_SELECTOR,
      transform: keepFields(JOB_FIELDS, sharedStrings),
    },
  },
};

/** The operator's choices for the manager: its cache selections, and its name and label on Events. */
export const operatorManagerOptions: ManagerOptions = {
  cache: operatorCacheOptions,
  events: { reportingController: MANAGED_BY_VALUE, labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE } },
};

/** Registers every controller of the operator with the manager. */
export function registerControllers(manager: Manager, options: OperatorOptions): void {
  registerBasicDeploymentController(manager);
  registerBasicReplicaSetController(manager);
  registerMachineController(manager);
  // The restore Jobs are the PodMachine's: it gets their image and deadline.
  registerPodMachineController(manager, {
    backupJobImage: options.backupJobImage,
    volumeCopyDeadlineMs: options.volumeCopyDeadlineMs,
  });
  registerVolumeBackupController(manager, options);
}
