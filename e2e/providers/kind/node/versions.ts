/**
 * Versions of what goes into the kind node image besides Kubernetes itself (VERSIONS in
 * e2e/providers/local/toolchain.ts pins Kubernetes, etcd and kind). They are the ones kind
 * v0.31.0 builds (images/base/Dockerfile; ensureNodeBinaries warns when kind's differ), except
 * where the Go module proxy does not serve kind's version (noted). The images kubeadm runs are
 * named by kubeadm itself (`kubeadm config images list`) and by kind's sources, read at build time.
 */
export const KIND_NODE_VERSIONS = {
  containerd: 'v2.2.0',
  runc: 'v1.2.9',
  cniPlugins: 'v1.8.0',
  /**
   * kind builds v0.0.32 (images/local-path-provisioner/Makefile), which the proxy refuses (403
   * "This module version is not available", as for v0.0.31); v0.0.30 is the newest it serves. The
   * flags kind's manifest passes (--debug start --helper-image --config) and its config format
   * are the same in v0.0.30.
   */
  localPathProvisioner: 'v0.0.30',
} as const;

/** The Go build tags kind's base image builds containerd with (images/base/Dockerfile BUILDTAGS). */
export const CONTAINERD_BUILDTAGS = ['no_aufs', 'no_zfs', 'no_btrfs', 'no_devmapper'] as const;

/** The CNI plugins the node gets: kind's four (host-local, loopback, ptp, portmap) and bridge. */
export const CNI_PLUGINS = {
  'host-local': 'plugins/ipam/host-local',
  loopback: 'plugins/main/loopback',
  ptp: 'plugins/main/ptp',
  portmap: 'plugins/meta/portmap',
  bridge: 'plugins/main/bridge',
} as const;
