/**
 * What every test cluster gets besides the control plane: simulated nodes (kwok makes their pods
 * Running and Ready) and storage that binds claims (a StorageClass plus pre-provisioned volumes).
 */
export const NODE_COUNT = 4;
/** Pods each node takes: enough for the 30,000 pods of the benchmark's largest workload (3000x10). */
export const PODS_PER_NODE = 10_000;
export const STORAGE_CLASS = 'standard';
export const PV_SIZE = '10Gi';

export function nodesManifest(count = NODE_COUNT): string {
  const docs: string[] = [];
  for (let i = 0; i < count; i++) {
    docs.push(`apiVersion: v1
kind: Node
metadata:
  name: kwok-node-${i}
  annotations:
    kwok.x-k8s.io/node: fake
    node.alpha.kubernetes.io/ttl: "0"
  labels:
    type: kwok
    kubernetes.io/hostname: kwok-node-${i}
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
    node-role.kubernetes.io/agent: ""
status:
  allocatable: {cpu: "1000", memory: 4Ti, pods: "${PODS_PER_NODE}", ephemeral-storage: 10Ti}
  capacity: {cpu: "1000", memory: 4Ti, pods: "${PODS_PER_NODE}", ephemeral-storage: 10Ti}
  nodeInfo: {architecture: amd64, operatingSystem: linux, kubeletVersion: fake, kernelVersion: fake, osImage: kwok}
  phase: Running`);
  }
  return docs.join('\n---\n');
}

export function storageClassManifest(): string {
  return `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: ${STORAGE_CLASS}
  annotations:
    storageclass.kubernetes.io/is-default-class: "true"
provisioner: kubernetes.io/no-provisioner
reclaimPolicy: Retain
volumeBindingMode: Immediate`;
}

/** Pre-provisioned volumes named pv-<start>..; the binder hands one to each claim. */
export function volumesManifest(start: number, count: number): string {
  const docs: string[] = [];
  for (let i = start; i < start + count; i++) {
    docs.push(`apiVersion: v1
kind: PersistentVolume
metadata:
  name: pv-${String(i).padStart(4, '0')}
  labels: {basicoperator.dev/test-pool: "true"}
spec:
  capacity: {storage: ${PV_SIZE}}
  accessModes: [ReadWriteOnce, ReadWriteMany, ReadOnlyMany]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: ${STORAGE_CLASS}
  hostPath: {path: /tmp/basic-operator-pv/${i}, type: DirectoryOrCreate}`);
  }
  return docs.join('\n---\n');
}
