/**
 * The kind cluster configuration: one control-plane node (it runs workloads too, as kind's default
 * cluster does). Its kubelet accepts a cgroup v1 host: kubelet 1.35+ refuses one unless
 * `failCgroupV1: false`, and many CI machines still boot with cgroup v1 (harmless on v2).
 */
export function clusterConfig(options: { nodeImage?: string | undefined }): string {
  const image = options.nodeImage ? `\n    image: ${options.nodeImage}` : '';
  return `kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
nodes:
  - role: control-plane${image}
kubeadmConfigPatches:
  - |
    kind: KubeletConfiguration
    failCgroupV1: false
`;
}
