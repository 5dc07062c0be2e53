/** What the test suites need from a cluster, whichever provider made it. */
export interface ClusterInfo {
  provider: 'local' | 'kind';
  name: string;
  kubeconfig: string;
  kubectl: string;
  helm: string;
  serverVersion: string;
  /** Images the cluster can run without pulling (kind): the operator's and a busybox for suites. */
  images?: { operator: string; workload: string };
}

export interface ClusterProvider {
  readonly name: 'local' | 'kind';
  /** The cluster's name (several local clusters may exist side by side). */
  readonly cluster: string;
  /** Builds what is missing and brings the cluster up; safe to call when it is already up. */
  up(): Promise<ClusterInfo>;
  /** Stops the cluster's processes, so it takes no CPU or memory; up() brings it back. */
  stop(): Promise<void>;
  down(): Promise<void>;
  /** The running cluster, or undefined. */
  status(): Promise<ClusterInfo | undefined>;
  /** Some of the cluster's processes run (cheaper than status(): nothing is built or asked). */
  running(): Promise<boolean>;
}
