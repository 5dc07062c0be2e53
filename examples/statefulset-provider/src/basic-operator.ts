// Everything this provider takes from basic-operator, in one place. In a repository of its own a
// provider imports these from the basic-operator package; here they come from the source tree.
// Only two parts of the project are used, as the project's own controllers use them: `src/apis`
// (the contract's names, the Machine volume shape, VolumeBackup, the volume-copy pod and its report)
// and `src/runtime` (manager, controller builder, informers, status writer, events, admission's
// dry run).

export { conditionsSchema, observedGenerationSchema } from '../../../src/apis/common-schemas.ts';
export {
  addressesSchema,
  CONTRACT_LABEL,
  type Condition,
  type CopyPrivilege,
  type CustomResourceDefinition,
  containerFieldsSchema,
  copyAsStatusSchema,
  copyIdentityOf,
  copyPodProbe,
  copyPrivilege,
  copyTermination,
  describeCopyPrivilege,
  describeManifest,
  type InfrastructureAddress,
  type InfrastructureCopyAs,
  jobOutcome,
  type MachinePodFields,
  type MachineVolume,
  type MachineVolumeStatus,
  machineContainer,
  machinePodSpecFields,
  parseCopyReport,
  reportableCopyAs,
  restoreSource,
  sameManifest,
  stopRequested,
  VOLUME_BACKUP,
  type VolumeBackup,
  type VolumeManifest,
  volumeCopyPodTemplate,
  volumeStatusesSchema,
  volumesSchema,
} from '../../../src/apis/index.ts';
export { podFieldsSchema } from '../../../src/apis/infra/v1alpha1/pod-fields-schema.ts';
// The contract (docs/contracts.md) and the shared API pieces.
export type { JsonSchemaProps } from '../../../src/apis/json-schema.ts';

// The runtime.
export type { Informer } from '../../../src/runtime/cache/informer.ts';
export type { CacheOptions } from '../../../src/runtime/cache/informer-cache.ts';
export {
  isAlreadyExists,
  isForbidden,
  isInvalid,
  isNotFound,
} from '../../../src/runtime/client/errors.ts';
export type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
export { isBeingDeleted, type KubeObject } from '../../../src/runtime/client/object.ts';
export {
  CoreTypes,
  type ResourceType,
  resourceId,
  resourceOf,
} from '../../../src/runtime/client/resource.ts';
export {
  annotationsChanged,
  any,
  deletionChanged,
  generationChanged,
} from '../../../src/runtime/controller/predicates.ts';
export type {
  ReconcileContext,
  Reconciler,
  Request,
  Result,
} from '../../../src/runtime/controller/reconciler.ts';
export type { ObjectEventRecorder } from '../../../src/runtime/events/index.ts';
export { errorMessage } from '../../../src/runtime/log.ts';
export {
  ConfigError,
  type FlagReader,
  type FlagSpec,
  type ManagerFlagDefaults,
} from '../../../src/runtime/manager/config.ts';
export type { Manager, ManagerOptions } from '../../../src/runtime/manager/manager.ts';
export { runMain } from '../../../src/runtime/manager/run.ts';
export { podRefusal } from '../../../src/runtime/write/admission.ts';
export { findCondition, setCondition } from '../../../src/runtime/write/conditions.ts';
export { controllerReference, isControlledBy } from '../../../src/runtime/write/owner-refs.ts';
