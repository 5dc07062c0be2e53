// The checks of the Pod Security Standards' `restricted` profile (latest) that a pod spec can fail,
// as kube-apiserver's PodSecurity admission applies them; the integration tests prove admission.
import type { V1PodSpec } from '@kubernetes/client-node';

const ALLOWED_VOLUME_KINDS = [
  'configMap',
  'csi',
  'downwardAPI',
  'emptyDir',
  'ephemeral',
  'persistentVolumeClaim',
  'projected',
  'secret',
] as const;

/** Every way `spec` breaks `restricted`; empty when it passes. */
export function restrictedViolations(spec: V1PodSpec): string[] {
  const out: string[] = [];
  const pod = spec.securityContext ?? {};
  const containers = [...(spec.initContainers ?? []), ...spec.containers];
  if (spec.hostNetwork || spec.hostPID || spec.hostIPC) out.push('host namespaces');
  for (const v of spec.volumes ?? []) {
    const kinds = Object.keys(v).filter((k) => k !== 'name');
    if (!kinds.every((k) => (ALLOWED_VOLUME_KINDS as readonly string[]).includes(k)))
      out.push(`volume ${v.name}: ${kinds.join(',')}`);
  }
  if (pod.runAsUser === 0) out.push('pod runAsUser 0');
  const podSeccomp = pod.seccompProfile?.type;
  for (const c of containers) {
    const sc = c.securityContext ?? {};
    if (sc.privileged) out.push(`${c.name}: privileged`);
    if (sc.allowPrivilegeEscalation !== false) out.push(`${c.name}: allowPrivilegeEscalation != false`);
    if (!(sc.runAsNonRoot ?? pod.runAsNonRoot)) out.push(`${c.name}: runAsNonRoot != true`);
    if (sc.runAsUser === 0) out.push(`${c.name}: runAsUser 0`);
    const seccomp = sc.seccompProfile?.type ?? podSeccomp;
    if (seccomp !== 'RuntimeDefault' && seccomp !== 'Localhost') out.push(`${c.name}: seccompProfile`);
    if (!sc.capabilities?.drop?.includes('ALL')) out.push(`${c.name}: capabilities.drop != ALL`);
    const added = (sc.capabilities?.add ?? []).filter((a) => a !== 'NET_BIND_SERVICE');
    if (added.length > 0) out.push(`${c.name}: capabilities.add ${added.join(',')}`);
    if ((c.ports ?? []).some((p) => p.hostPort)) out.push(`${c.name}: hostPort`);
  }
  return out;
}
