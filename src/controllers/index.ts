import { MANAGED_BY_LABEL, MANAGED_BY_VALUE } from '../apis/index.ts';
import type { CacheOptions } from '../runtime/cache/informer-cache.ts';
import { StringPool } from '../runtime/cache/keep-fields.ts';
import { CoreTypes, resourceId } from '../runtime/client/resource.ts';
import type { Manager, ManagerOptions } from '../runtime/manager/manager.ts';
import { basicDeploymentDeclaration } from './basicdeployment/declaration.ts';
import { basicReplicaSetDeclaration } from './basicreplicaset/declaration.ts';
import { cacheTransforms, mergedCacheShapes } from './cache-transforms.ts';
import type { ControllerDeclaration } from './declaration.ts';
import type { OperatorOptions } from './flags.ts';
import { machineDeclaration } from './machine/declaration.ts';
import { machineBackupDeclaration } from './machinebackup/declaration.ts';
import { podMachineDeclaration } from './podmachine/declaration.ts';
import { volumeBackupDeclaration } from './volumebackup/declaration.ts';

const MANAGED_BY_SELECTOR = `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}`;

/**
 * Every controller of the operator, in the order they are registered. `npm run generate` writes the
 * operator's RBAC and `kubectl basic`'s kinds from this list (scripts/generate-controllers.ts); the
 * operator's cache transforms are merged from it at startup (cache-transforms.ts).
 */
export const CONTROLLERS: readonly ControllerDeclaration[] = [
  basicDeploymentDeclaration,
  basicReplicaSetDeclaration,
  machineDeclaration,
  podMachineDeclaration,
  machineBackupDeclaration,
  volumeBackupDeclaration,
];

const transforms = cacheTransforms(mergedCacheShapes(CONTROLLERS), new StringPool());

/**
 * What the operator's cache holds unless a controller asks for another selection: of Pods, claims
 * and Jobs only those built from the operator's own manifests (PodMachine pods, claims, backup and
 * restore Jobs), so memory follows what it manages. The BasicReplicaSet controller asks for its
 * pods by its own marker label (see its index.ts). Of each of these objects, whatever selection
 * it is cached in, only the fields some controller declares it reads (cache-transforms.ts).
 */
const operatorCacheOptions: CacheOptions = {
  byObject: {
    [resourceId(CoreTypes.Pod)]: { labelSelector: MANAGED_BY_SELECTOR, transform: transforms.pods },
    [resourceId(CoreTypes.PersistentVolumeClaim)]: {
      labelSelector: MANAGED_BY_SELECTOR,
      transform: transforms.claims,
    },
    [resourceId(CoreTypes.Job)]: { labelSelector: MANAGED_BY_SELECTOR, transform: transforms.jobs },
  },
};

/** The operator's choices for the manager: its cache selections, and its name and label on Events. */
export const operatorManagerOptions: ManagerOptions = {
  cache: operatorCacheOptions,
  events: { reportingController: MANAGED_BY_VALUE, labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE } },
};

/** Registers every controller of the operator with the manager. */
export function registerControllers(manager: Manager, options: OperatorOptions): void {
  for (const controller of CONTROLLERS) controller.register(manager, options);
}
