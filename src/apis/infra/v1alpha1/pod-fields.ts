// The pod surface of a Machine's single container, shared by the inline Machine and PodMachine
// (docs/podmachine.md, field by field). Each field has core/v1's name and shape, so what a user
// knows from a StatefulSet's pod template applies unchanged. All immutable after creation.
import type {
  V1Affinity,
  V1Container,
  V1ContainerPort,
  V1EnvFromSource,
  V1EnvVar,
  V1PodSecurityContext,
  V1PodSpec,
  V1Probe,
  V1ResourceRequirements,
  V1SecurityContext,
  V1Toleration,
  V1VolumeMount,
} from '@kubernetes/client-node';

export interface MachinePodFields {
  /** Environment of the container, from values, Secrets, ConfigMaps or the downward API. */
  env?: V1EnvVar[];
  envFrom?: V1EnvFromSource[];
  /** Requests and limits (cpu, memory, ephemeral-storage); unset means BestEffort. */
  resources?: V1ResourceRequirements;
  ports?: V1ContainerPort[];
  /** The Machine's Ready follows the pod's readiness, and so this probe. */
  readinessProbe?: V1Probe;
  livenessProbe?: V1Probe;
  startupProbe?: V1Probe;
  /**
   * The container's security context, merged over the restricted defaults
   * (allowPrivilegeEscalation false, capabilities drop ALL).
   */
  securityContext?: V1SecurityContext;
  /**
   * The pod's security context, merged over the restricted defaults (runAsNonRoot, runAsUser,
   * runAsGroup and fsGroup 65532, seccompProfile RuntimeDefault). Backup and restore copies of
   * the volumes run as its runAsUser/runAsGroup when they cannot run as root.
   */
  podSecurityContext?: V1PodSecurityContext;
  /** Default: the namespace's "default" ServiceAccount. */
  serviceAccountName?: string;
  /** Default false: a Machine's pod gets no API token unless it asks for one. */
  automountServiceAccountToken?: boolean;
  nodeSelector?: Record<string, string>;
  tolerations?: V1Toleration[];
  affinity?: V1Affinity;
}

/** The names of MachinePodFields, in the order documented. */
export const MACHINE_POD_FIELDS = [
  'env',
  'envFrom',
  'resources',
  'ports',
  'readinessProbe',
  'livenessProbe',
  'startupProbe',
  'securityContext',
  'podSecurityContext',
  'serviceAccountName',
  'automountServiceAccountToken',
  'nodeSelector',
  'tolerations',
  'affinity',
] as const satisfies readonly (keyof MachinePodFields)[];

/** The uid and gid a Machine's pod runs as when its podSecurityContext names none. */
export const DEFAULT_MACHINE_USER = 65532;

/** A uid of 0 asked for at the pod or the container: the user wants root, so non-root is not defaulted. */
function asksForRoot(fields: MachinePodFields): boolean {
  return fields.podSecurityContext?.runAsUser === 0 || fields.securityContext?.runAsUser === 0;
}

/**
 * The pod's security context: the user's podSecurityContext merged field by field over the
 * defaults that pass Pod Security `restricted` (runAsNonRoot, runAsUser, runAsGroup and fsGroup
 * DEFAULT_MACHINE_USER, fsGroupChangePolicy OnRootMismatch, seccompProfile RuntimeDefault). runAsNonRoot is not defaulted when the pod
 * or container asks for uid 0: the kubelet would refuse to start such a container.
 */
export function machinePodSecurityContext(fields: MachinePodFields): V1PodSecurityContext {
  return {
    ...(asksForRoot(fields) ? {} : { runAsNonRoot: true }),
    runAsUser: DEFAULT_MACHINE_USER,
    runAsGroup: DEFAULT_MACHINE_USER,
    fsGroup: DEFAULT_MACHINE_USER,
    // The kubelet's default (Always) re-applies the fsGroup recursively on every mount where it
    // manages ownership, making a 0700 directory 2770: PostgreSQL then refuses its data directory.
    fsGroupChangePolicy: 'OnRootMismatch',
    seccompProfile: { type: 'RuntimeDefault' },
    ...structuredClone(fields.podSecurityContext ?? {}),
  };
}

/**
 * The container's security context: the user's securityContext merged field by field over the
 * defaults that pass `restricted` (allowPrivilegeEscalation false, capabilities drop ALL; a user's
 * capabilities.add keeps the drop unless it names its own). A privileged container, or one adding
 * CAP_SYS_ADMIN (so spelled), gets no allowPrivilegeEscalation default: core/v1 refuses false beside
 * either.
 */
export function machineContainerSecurityContext(fields: MachinePodFields): V1SecurityContext {
  const user = structuredClone(fields.securityContext ?? {});
  const escalates = user.privileged === true || (user.capabilities?.add ?? []).includes('CAP_SYS_ADMIN');
  return {
    ...(escalates ? {} : { allowPrivilegeEscalation: false }),
    ...user,
    capabilities: { drop: ['ALL'], ...user.capabilities },
  };
}

const copy = <T>(value: T | undefined): T | undefined =>
  value === undefined ? undefined : structuredClone(value);

/** `fields` without the undefined ones, so an unset field stays absent from the object sent. */
function defined<T extends object>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * A Machine's single container, as every provider that runs one builds it: the image, command and
 * args, the container's pod fields (copied), and the restricted security defaults.
 */
export function machineContainer(
  name: string,
  spec: MachinePodFields & { image: string; command?: string[]; args?: string[] },
  volumeMounts: V1VolumeMount[],
): V1Container {
  return {
    name,
    image: spec.image,
    ...(spec.command ? { command: [...spec.command] } : {}),
    ...(spec.args ? { args: [...spec.args] } : {}),
    ...defined({
      env: copy(spec.env),
      envFrom: copy(spec.envFrom),
      resources: copy(spec.resources),
      ports: copy(spec.ports),
      readinessProbe: copy(spec.readinessProbe),
      livenessProbe: copy(spec.livenessProbe),
      startupProbe: copy(spec.startupProbe),
    }),
    securityContext: machineContainerSecurityContext(spec),
    volumeMounts,
  };
}

/**
 * The pod-level fields a Machine's pod takes from its spec: the security context over the
 * restricted defaults, no API token unless asked, the ServiceAccount and scheduling.
 */
export function machinePodSpecFields(
  spec: MachinePodFields,
): Pick<
  V1PodSpec,
  | 'securityContext'
  | 'automountServiceAccountToken'
  | 'serviceAccountName'
  | 'nodeSelector'
  | 'tolerations'
  | 'affinity'
> {
  return {
    securityContext: machinePodSecurityContext(spec),
    automountServiceAccountToken: spec.automountServiceAccountToken ?? false,
    ...defined({
      serviceAccountName: spec.serviceAccountName,
      nodeSelector: copy(spec.nodeSelector),
      tolerations: copy(spec.tolerations),
      affinity: copy(spec.affinity),
    }),
  };
}
