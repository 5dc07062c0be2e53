// The CustomResourceDefinition of StatefulSetMachine. generate-crd.ts writes it to
// crd/examples.basicoperator.dev_statefulsetmachines.yaml.
import { PHASES, STATEFULSET_MACHINE } from './api.ts';
import {
  addressesSchema,
  CONTRACT_LABEL,
  type CustomResourceDefinition,
  conditionsSchema,
  containerFieldsSchema,
  copyAsStatusSchema,
  type JsonSchemaProps,
  observedGenerationSchema,
  podFieldsSchema,
  volumeStatusesSchema,
  volumesSchema,
} from './basic-operator.ts';
import { MAX_MACHINE_NAME } from './names.ts';

const specSchema: JsonSchemaProps = {
  type: 'object',
  description:
    "Immutable. The same fields as a PodMachine's, so a VolumeBackup of either provider restores into the other.",
  required: ['image'],
  // The Machine's volume shape (names, sizes, unique mount paths, restoreFrom) and pod fields (env,
  // resources, probes, security contexts, scheduling: validated as PodMachine's are).
  properties: { ...containerFieldsSchema, volumes: volumesSchema, ...podFieldsSchema },
  'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'spec is immutable' }],
};

const statusSchema: JsonSchemaProps = {
  type: 'object',
  properties: {
    phase: { type: 'string', enum: PHASES },
    ready: {
      type: 'boolean',
      description: 'The pod runs and is Ready, every claim is Bound, and no stop was requested.',
    },
    providerID: { type: 'string', maxLength: 512, description: 'statefulset://<namespace>/<name>' },
    addresses: addressesSchema,
    volumes: volumeStatusesSchema,
    copyAs: {
      ...copyAsStatusSchema,
      description:
        "The contract's copyAs: the pod's runAsUser, runAsGroup and fsGroup (spec.podSecurityContext over the defaults, 65532 each); absent when it runs as root.",
    },
    stopped: {
      type: 'boolean',
      description:
        'After a stop request: the StatefulSet is at 0 replicas, its pod is gone, the claims kept.',
    },
    failureReason: { type: 'string', maxLength: 1024 },
    failureMessage: { type: 'string', maxLength: 32768 },
    observedGeneration: observedGenerationSchema,
    conditions: conditionsSchema,
  },
};

/**
 * The name becomes the StatefulSet's, its pod's (`<name>-0`, also the pod's hostname: a DNS label)
 * and part of the `controller-revision-hash` label kube-controller-manager puts on the pod
 * (`<name>-<10 characters>`, at most 63).
 */
const nameRule = {
  rule: `self.metadata.name.size() <= ${MAX_MACHINE_NAME} && self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')`,
  message: `metadata.name must be a DNS label of at most ${MAX_MACHINE_NAME} characters: the StatefulSet, its pod and its revision label are named after it`,
};

const schema: JsonSchemaProps = {
  type: 'object',
  description:
    'StatefulSetMachine realizes a Machine as a StatefulSet of one replica with volumeClaimTemplates (a provider of the Machine infrastructure contract v1).',
  required: ['spec'],
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object' },
    spec: specSchema,
    status: statusSchema,
  },
  'x-kubernetes-validations': [nameRule],
};

const r = STATEFULSET_MACHINE;

export const statefulSetMachineCrd: CustomResourceDefinition = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: {
    name: `${r.plural}.${r.group}`,
    labels: {
      'app.kubernetes.io/name': 'statefulset-provider',
      // The declaration the Machine controller looks for: this kind's v1alpha1 implements contract v1.
      [CONTRACT_LABEL]: r.version,
    },
  },
  spec: {
    group: r.group,
    names: {
      kind: r.kind,
      listKind: r.listKind,
      plural: r.plural,
      singular: r.singular,
      shortNames: r.shortNames,
    },
    scope: 'Namespaced',
    versions: [
      {
        name: r.version,
        served: true,
        storage: true,
        schema: { openAPIV3Schema: schema },
        subresources: { status: {} },
        additionalPrinterColumns: [
          { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'Lifecycle phase' },
          {
            name: 'Ready',
            type: 'boolean',
            jsonPath: '.status.ready',
            description: 'The pod runs and every claim is Bound',
          },
          { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
        ],
      },
    ],
  },
};
