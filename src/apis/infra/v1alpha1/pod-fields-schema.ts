// The schema of MachinePodFields (pod-fields.ts), shared by Machine and PodMachine: core/v1's
// names and shapes, with bounds on every list, map and string so the CEL rules on the spec (the
// immutability rules compare whole fields) stay inside the apiserver's cost budget.
import { DNS_SUBDOMAIN_PATTERN, int32Schema } from '../../common-schemas.ts';
import type { JsonSchemaProps, ValidationRule } from '../../json-schema.ts';
import { RULES } from '../../rules.ts';
import type { MACHINE_POD_FIELDS } from './pod-fields.ts';

const MAX_ENV = 128;
const MAX_ENV_FROM = 16;
const MAX_PORTS = 64;
const MAX_COMMAND = 64;
const MAX_HEADERS = 16;
const MAX_RESOURCES = 16;
const MAX_CAPABILITIES = 64;
const MAX_GROUPS = 32;
const MAX_SYSCTLS = 32;
const MAX_NODE_SELECTOR = 32;
const MAX_TOLERATIONS = 32;
const MAX_TERMS = 16;
const MAX_REQUIREMENTS = 16;
const MAX_VALUES = 64;
/** An environment value, a command word: room for a certificate, bounded for CEL. */
const MAX_VALUE_LENGTH = 32768;
const MAX_SHORT = 253;
/** A label key or qualified name: an optional DNS subdomain prefix (253), a slash, a name (63). */
const MAX_KEY = 317;

const str = (maxLength: number, extra: Partial<JsonSchemaProps> = {}): JsonSchemaProps => ({
  type: 'string',
  maxLength,
  ...extra,
});
const list = (items: JsonSchemaProps, maxItems: number, extra: Partial<JsonSchemaProps> = {}) =>
  ({ type: 'array', maxItems, items, ...extra }) satisfies JsonSchemaProps;
const int64: JsonSchemaProps = { type: 'integer', format: 'int64' };
const bool: JsonSchemaProps = { type: 'boolean' };

/** A resource.Quantity: a number, or a string such as "500m" or "1Gi". */
const quantitySchema: JsonSchemaProps = {
  anyOf: [{ type: 'integer' }, { type: 'string' }],
  'x-kubernetes-int-or-string': true,
  maxLength: 64,
  pattern:
    '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$',
};

/**
 * An IANA service name, as a port's name, as core/v1 checks it (IsValidPortName): lower-case letters
 * and digits, hyphens only single and inside, at least one letter ("8080" as a string is refused),
 * at most 15 characters (maxLength). Groups of digits, then the first group with a letter, then any.
 */
const PORT_NAME_PATTERN = '^([0-9]+-)*[0-9]*[a-z][a-z0-9]*(-[a-z0-9]+)*$';
const portNameSchema: JsonSchemaProps = str(15, { minLength: 1, pattern: PORT_NAME_PATTERN });

/** A port number or the name of a container port. */
const probePortSchema: JsonSchemaProps = {
  anyOf: [{ type: 'integer' }, { type: 'string' }],
  'x-kubernetes-int-or-string': true,
  minimum: 1,
  maximum: 65535,
  maxLength: 15,
  pattern: PORT_NAME_PATTERN,
};

const keyRefSchema = (what: string): JsonSchemaProps => ({
  type: 'object',
  description: `A key of a ${what} in the Machine's namespace.`,
  required: ['key'],
  properties: {
    name: str(MAX_SHORT, { description: `Name of the ${what}.` }),
    key: str(MAX_SHORT, { minLength: 1 }),
    optional: { ...bool, description: `Start without the variable when the ${what} or key is missing.` },
  },
  'x-kubernetes-map-type': 'atomic',
});

const envVarSchema: JsonSchemaProps = {
  type: 'object',
  required: ['name'],
  properties: {
    name: str(MAX_SHORT, { minLength: 1 }),
    value: str(MAX_VALUE_LENGTH, { description: '$(VAR) references to earlier variables are expanded.' }),
    valueFrom: {
      type: 'object',
      properties: {
        secretKeyRef: keyRefSchema('Secret'),
        configMapKeyRef: keyRefSchema('ConfigMap'),
        fieldRef: {
          type: 'object',
          description: 'A field of the pod: metadata.name, metadata.namespace, status.podIP, ...',
          required: ['fieldPath'],
          properties: { apiVersion: str(64), fieldPath: str(MAX_SHORT, { minLength: 1 }) },
          'x-kubernetes-map-type': 'atomic',
        },
        resourceFieldRef: {
          type: 'object',
          description: 'A request or limit of the container: limits.cpu, requests.memory, ...',
          required: ['resource'],
          properties: {
            containerName: str(63),
            resource: str(MAX_SHORT, { minLength: 1 }),
            divisor: quantitySchema,
          },
          'x-kubernetes-map-type': 'atomic',
        },
      },
      'x-kubernetes-validations': [RULES.envValueFromExactlyOne],
    },
  },
  'x-kubernetes-validations': [RULES.envValueOrValueFrom],
};

const envFromRefSchema = (what: string): JsonSchemaProps => ({
  type: 'object',
  description: `Every key of a ${what} in the Machine's namespace becomes a variable.`,
  properties: {
    name: str(MAX_SHORT),
    optional: { ...bool, description: `Start without them when the ${what} is missing.` },
  },
  'x-kubernetes-map-type': 'atomic',
});

const envFromSchema: JsonSchemaProps = {
  type: 'object',
  properties: {
    prefix: str(MAX_SHORT, { description: 'Prepended to every key.' }),
    secretRef: envFromRefSchema('Secret'),
    configMapRef: envFromRefSchema('ConfigMap'),
  },
  'x-kubernetes-validations': [RULES.envFromExactlyOne],
};

const resourceListSchema: JsonSchemaProps = {
  type: 'object',
  maxProperties: MAX_RESOURCES,
  additionalProperties: quantitySchema,
};

const resourcesSchema: JsonSchemaProps = {
  type: 'object',
  description:
    'Requests and limits (cpu, memory, ephemeral-storage, extended resources); unset means BestEffort.',
  properties: { limits: resourceListSchema, requests: resourceListSchema },
};

const portSchema: JsonSchemaProps = {
  type: 'object',
  required: ['containerPort'],
  properties: {
    containerPort: { type: 'integer', format: 'int32', minimum: 1, maximum: 65535 },
    name: portNameSchema,
    protocol: { type: 'string', enum: ['TCP', 'UDP', 'SCTP'], default: 'TCP' },
  },
};

const probeSchema = (
  description: string,
  rules: readonly ValidationRule[] = [RULES.probeExactlyOneHandler],
): JsonSchemaProps => ({
  type: 'object',
  description,
  properties: {
    exec: {
      type: 'object',
      properties: { command: list(str(MAX_VALUE_LENGTH), MAX_COMMAND, { minItems: 1 }) },
      required: ['command'],
    },
    httpGet: {
      type: 'object',
      required: ['port'],
      properties: {
        path: str(2048),
        port: probePortSchema,
        host: str(MAX_SHORT, { description: "Default: the pod's IP." }),
        scheme: { type: 'string', enum: ['HTTP', 'HTTPS'] },
        httpHeaders: list(
          {
            type: 'object',
            required: ['name', 'value'],
            properties: { name: str(MAX_SHORT, { minLength: 1 }), value: str(4096) },
          },
          MAX_HEADERS,
        ),
      },
    },
    tcpSocket: {
      type: 'object',
      required: ['port'],
      properties: { port: probePortSchema, host: str(MAX_SHORT) },
    },
    grpc: {
      type: 'object',
      required: ['port'],
      properties: {
        port: { type: 'integer', format: 'int32', minimum: 1, maximum: 65535 },
        service: str(MAX_SHORT),
      },
    },
    initialDelaySeconds: int32Schema(0),
    timeoutSeconds: int32Schema(1),
    periodSeconds: int32Schema(1),
    successThreshold: int32Schema(1),
    failureThreshold: int32Schema(1),
    terminationGracePeriodSeconds: { ...int64, minimum: 1 },
  },
  'x-kubernetes-validations': rules,
});

/** seccompProfile and appArmorProfile: a type, and a profile file only for Localhost. */
const profileSchema: JsonSchemaProps = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { type: 'string', enum: ['RuntimeDefault', 'Localhost', 'Unconfined'] },
    localhostProfile: str(4096),
  },
  'x-kubernetes-validations': [RULES.localhostProfileWithLocalhost],
};

const seLinuxOptionsSchema: JsonSchemaProps = {
  type: 'object',
  properties: { user: str(MAX_SHORT), role: str(MAX_SHORT), type: str(MAX_SHORT), level: str(MAX_SHORT) },
};

const windowsOptionsSchema: JsonSchemaProps = {
  type: 'object',
  properties: {
    gmsaCredentialSpecName: str(MAX_SHORT),
    gmsaCredentialSpec: str(65536),
    runAsUserName: str(256),
    hostProcess: bool,
  },
};

/** A user or group id: core/v1 refuses a pod whose ids exceed 2^31-1, though the field is int64. */
const unixId: JsonSchemaProps = { ...int64, minimum: 0, maximum: 2147483647 };

const userFields: Record<string, JsonSchemaProps> = {
  runAsUser: unixId,
  runAsGroup: unixId,
  runAsNonRoot: bool,
  seccompProfile: profileSchema,
  appArmorProfile: profileSchema,
  seLinuxOptions: seLinuxOptionsSchema,
  windowsOptions: windowsOptionsSchema,
};

const securityContextSchema: JsonSchemaProps = {
  type: 'object',
  description:
    "The container's security context (core/v1 SecurityContext), merged field by field over the restricted defaults: allowPrivilegeEscalation false, capabilities drop [ALL].",
  properties: {
    ...userFields,
    allowPrivilegeEscalation: bool,
    privileged: bool,
    readOnlyRootFilesystem: bool,
    procMount: { type: 'string', enum: ['Default', 'Unmasked'] },
    capabilities: {
      type: 'object',
      properties: {
        add: list(str(64), MAX_CAPABILITIES),
        drop: list(str(64), MAX_CAPABILITIES),
      },
    },
  },
};

const podSecurityContextSchema: JsonSchemaProps = {
  type: 'object',
  description:
    "The pod's security context (core/v1 PodSecurityContext), merged field by field over the restricted defaults: runAsNonRoot true, runAsUser, runAsGroup and fsGroup 65532, fsGroupChangePolicy OnRootMismatch, seccompProfile RuntimeDefault.",
  properties: {
    ...userFields,
    fsGroup: unixId,
    fsGroupChangePolicy: { type: 'string', enum: ['OnRootMismatch', 'Always'] },
    supplementalGroups: list(unixId, MAX_GROUPS),
    supplementalGroupsPolicy: { type: 'string', enum: ['Merge', 'Strict'] },
    seLinuxChangePolicy: { type: 'string', enum: ['MountOption', 'Recursive'] },
    sysctls: list(
      {
        type: 'object',
        required: ['name', 'value'],
        properties: { name: str(MAX_SHORT, { minLength: 1 }), value: str(1024) },
      },
      MAX_SYSCTLS,
    ),
  },
};

const tolerationSchema: JsonSchemaProps = {
  type: 'object',
  properties: {
    key: str(MAX_KEY, { description: 'Empty with operator Exists: tolerate every taint.' }),
    operator: { type: 'string', enum: ['Exists', 'Equal'], description: 'Default Equal.' },
    value: str(63),
    effect: {
      type: 'string',
      enum: ['', 'NoSchedule', 'PreferNoSchedule', 'NoExecute'],
      description: 'Empty: every effect.',
    },
    tolerationSeconds: {
      ...int64,
      description: 'NoExecute only: how long the pod stays bound after the taint.',
    },
  },
  'x-kubernetes-validations': [
    RULES.tolerationExistsHasNoValue,
    RULES.tolerationEmptyKeyNeedsExists,
    RULES.tolerationSecondsOnlyNoExecute,
  ],
};

// Affinity: core/v1's shape in full (not preserve-unknown-fields), so CEL sees every field and the
// immutability rules compare it.
const nodeSelectorRequirementSchema: JsonSchemaProps = {
  type: 'object',
  required: ['key', 'operator'],
  properties: {
    key: str(MAX_KEY, { minLength: 1 }),
    operator: { type: 'string', enum: ['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt'] },
    values: list(str(63), MAX_VALUES),
  },
  'x-kubernetes-validations': [RULES.nodeSelectorRequirementValues],
};

const nodeSelectorTermSchema: JsonSchemaProps = {
  type: 'object',
  properties: {
    matchExpressions: list(nodeSelectorRequirementSchema, MAX_REQUIREMENTS),
    matchFields: list(nodeSelectorRequirementSchema, MAX_REQUIREMENTS),
  },
  'x-kubernetes-map-type': 'atomic',
};

const weight: JsonSchemaProps = { type: 'integer', format: 'int32', minimum: 1, maximum: 100 };

const labelSelectorSchema: JsonSchemaProps = {
  type: 'object',
  properties: {
    matchLabels: {
      type: 'object',
      maxProperties: MAX_VALUES,
      additionalProperties: str(63),
    },
    matchExpressions: list(
      {
        type: 'object',
        required: ['key', 'operator'],
        properties: {
          key: str(MAX_KEY, { minLength: 1 }),
          operator: { type: 'string', enum: ['In', 'NotIn', 'Exists', 'DoesNotExist'] },
          values: list(str(63), MAX_VALUES),
        },
        'x-kubernetes-validations': [RULES.selectorRequirementValues],
      },
      MAX_REQUIREMENTS,
    ),
  },
  'x-kubernetes-map-type': 'atomic',
};

const podAffinityTermSchema: JsonSchemaProps = {
  type: 'object',
  required: ['topologyKey'],
  properties: {
    labelSelector: labelSelectorSchema,
    namespaceSelector: labelSelectorSchema,
    namespaces: list(str(63), MAX_VALUES),
    topologyKey: str(MAX_KEY, { minLength: 1 }),
    matchLabelKeys: list(str(MAX_KEY), MAX_REQUIREMENTS),
    mismatchLabelKeys: list(str(MAX_KEY), MAX_REQUIREMENTS),
  },
};

const podAffinitySchema: JsonSchemaProps = {
  type: 'object',
  properties: {
    requiredDuringSchedulingIgnoredDuringExecution: list(podAffinityTermSchema, MAX_TERMS),
    preferredDuringSchedulingIgnoredDuringExecution: list(
      {
        type: 'object',
        required: ['weight', 'podAffinityTerm'],
        properties: { weight, podAffinityTerm: podAffinityTermSchema },
      },
      MAX_TERMS,
    ),
  },
};

const affinitySchema: JsonSchemaProps = {
  type: 'object',
  description: "The pod's node affinity, pod affinity and pod anti-affinity (core/v1 Affinity).",
  properties: {
    nodeAffinity: {
      type: 'object',
      properties: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          type: 'object',
          required: ['nodeSelectorTerms'],
          properties: {
            nodeSelectorTerms: list(nodeSelectorTermSchema, MAX_TERMS, { minItems: 1 }),
          },
          'x-kubernetes-map-type': 'atomic',
        },
        preferredDuringSchedulingIgnoredDuringExecution: list(
          {
            type: 'object',
            required: ['weight', 'preference'],
            properties: { weight, preference: nodeSelectorTermSchema },
          },
          MAX_TERMS,
        ),
      },
    },
    podAffinity: podAffinitySchema,
    podAntiAffinity: podAffinitySchema,
  },
};

/**
 * The properties of MachinePodFields, as spec properties of Machine and PodMachine (docs/podmachine.md
 * documents each). Immutable after creation, by the spec's transition rules.
 */
export const podFieldsSchema: Record<(typeof MACHINE_POD_FIELDS)[number], JsonSchemaProps> = {
  env: list(envVarSchema, MAX_ENV, {
    description: 'Environment of the container, from values, Secrets, ConfigMaps or the downward API.',
  }),
  envFrom: list(envFromSchema, MAX_ENV_FROM, {
    description: 'Every key of a Secret or ConfigMap as a variable.',
  }),
  resources: resourcesSchema,
  ports: list(portSchema, MAX_PORTS, {
    description: 'Ports the container listens on (informational, and names for probes).',
    'x-kubernetes-validations': [RULES.portNamesUnique],
  }),
  readinessProbe: probeSchema("The Machine's Ready follows the pod's readiness, and so this probe.", [
    RULES.probeExactlyOneHandler,
    RULES.readinessProbeNoTerminationGrace,
  ]),
  livenessProbe: probeSchema('The container is restarted when it fails.', [
    RULES.probeExactlyOneHandler,
    RULES.probeSuccessThresholdOne,
  ]),
  startupProbe: probeSchema('The other probes wait until it succeeds once.', [
    RULES.probeExactlyOneHandler,
    RULES.probeSuccessThresholdOne,
  ]),
  securityContext: securityContextSchema,
  podSecurityContext: podSecurityContextSchema,
  serviceAccountName: {
    type: 'string',
    description: 'Default: the namespace\'s "default" ServiceAccount.',
    maxLength: 253,
    pattern: DNS_SUBDOMAIN_PATTERN,
  },
  automountServiceAccountToken: {
    type: 'boolean',
    description: 'Default false: the pod gets an API token only when this is true.',
  },
  nodeSelector: {
    type: 'object',
    maxProperties: MAX_NODE_SELECTOR,
    additionalProperties: str(63),
    'x-kubernetes-map-type': 'atomic',
  },
  tolerations: list(tolerationSchema, MAX_TOLERATIONS),
  affinity: affinitySchema,
};
