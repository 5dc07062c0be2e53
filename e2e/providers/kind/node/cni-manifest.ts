/**
 * The default CNI of the locally built node image. kind's is kindnetd, whose source the Go module
 * proxy does not serve, so it cannot be built here. This DaemonSet does the one thing kindnetd
 * does on a single node: it writes a CNI configuration (ptp + host-local, as kindnetd writes, with
 * ptp's own masquerading instead of kindnetd's) into the node's /etc/cni/net.d. Pods get addresses
 * from the whole pod subnet, so clusters of this image must have one node (pods on two nodes would
 * have no route to each other); kind's own node image, with kindnetd, has no such limit.
 *
 * kind templates `{{ .PodSubnet }}` in this file because of the marker line below.
 */
export function defaultCniManifest(image: string): string {
  const conflist = {
    cniVersion: '0.3.1',
    name: 'kind',
    plugins: [
      {
        type: 'ptp',
        ipMasq: true,
        ipam: {
          type: 'host-local',
          dataDir: '/run/cni-ipam-state',
          routes: [{ dst: '0.0.0.0/0' }],
          ranges: [[{ subnet: '{{ .PodSubnet }}' }]],
        },
        mtu: 1500,
      },
      { type: 'portmap', capabilities: { portMappings: true } },
    ],
  };
  const script = [
    'set -e',
    `cat > /host/etc/cni/net.d/.10-kind.conflist.tmp <<'EOF'`,
    JSON.stringify(conflist, null, 2),
    'EOF',
    'mv /host/etc/cni/net.d/.10-kind.conflist.tmp /host/etc/cni/net.d/10-kind.conflist',
    'echo "wrote /etc/cni/net.d/10-kind.conflist"',
    'exec sleep 2147483647',
  ].join('\n');
  return `# would you kindly template this file
# basic-operator's single-node CNI for its locally built kind node image (see cni-manifest.ts)
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: kind-cni
  namespace: kube-system
  labels:
    app: kind-cni
spec:
  selector:
    matchLabels:
      app: kind-cni
  template:
    metadata:
      labels:
        app: kind-cni
    spec:
      hostNetwork: true
      priorityClassName: system-node-critical
      tolerations:
        - operator: Exists
      containers:
        - name: write-cni-config
          image: ${image}
          imagePullPolicy: IfNotPresent
          command: ["sh", "-c", ${JSON.stringify(script)}]
          volumeMounts:
            - name: cni-config
              mountPath: /host/etc/cni/net.d
          resources:
            requests:
              cpu: 5m
              memory: 8Mi
      terminationGracePeriodSeconds: 1
      volumes:
        - name: cni-config
          hostPath:
            path: /etc/cni/net.d
            type: DirectoryOrCreate
`;
}
