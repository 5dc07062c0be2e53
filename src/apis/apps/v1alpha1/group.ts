// Names of the apps.basicoperator.dev/v1alpha1 API group.

export const APPS_GROUP = 'apps.basicoperator.dev';
export const APPS_VERSION = 'v1alpha1';
export const APPS_API_VERSION = 'apps.basicoperator.dev/v1alpha1';

/** On a BasicReplicaSet: the revision number of its template within the owning BasicDeployment. */
export const REVISION_ANNOTATION = 'apps.basicoperator.dev/revision';
/** On a BasicReplicaSet's selector, template and pods: the hash that tells templates apart. */
export const POD_TEMPLATE_HASH_LABEL = 'apps.basicoperator.dev/pod-template-hash';
/**
 * On every pod a BasicReplicaSet creates or adopts, value "true": the operator's own mark, so its pod
 * cache holds only the pods it manages. Reserved: a template or selector may not use this key.
 */
export const REPLICA_SET_POD_LABEL = 'apps.basicoperator.dev/replicaset-pod';
export const REPLICA_SET_POD_VALUE = 'true';

/** The longest pod-template-hash: a 32-bit hash in decimal, one safe character per digit. */
export const POD_TEMPLATE_HASH_MAX_LENGTH = 10;
/**
 * The longest BasicDeployment name: its BasicReplicaSets are named `<name>-<pod-template-hash>`, and
 * object names stop at 253 characters.
 */
export const MAX_BASIC_DEPLOYMENT_NAME = 253 - 1 - POD_TEMPLATE_HASH_MAX_LENGTH;
