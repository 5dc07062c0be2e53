/**
 * What `npm test` does with its clusters when it ends: it stops those it brought up that were not
 * running when it began, so a benchmark or another run after it does not share the machine with
 * them; one that was already running (a developer's) is left as it was.
 */
export interface SuiteCluster {
  /** As the closing line names it: "local basic-operator", "kind basic-operator". */
  readonly name: string;
  /** Some of its processes ran when the run began. */
  readonly runningBefore: boolean;
  /** The run brought it up, or tried to. */
  readonly broughtUp: boolean;
}

export function clustersToStop<C extends SuiteCluster>(clusters: readonly C[]): C[] {
  return clusters.filter((c) => c.broughtUp && !c.runningBefore);
}

/** One line: which clusters the run stops and which it leaves running, and why. */
export function describeClusterEnd(clusters: readonly SuiteCluster[]): string {
  const stopped = clustersToStop(clusters).map((c) => c.name);
  const left = clusters.filter((c) => c.broughtUp && c.runningBefore).map((c) => c.name);
  const parts = [
    ...(stopped.length > 0
      ? [`stopping ${stopped.join(' and ')} (this run started ${stopped.length > 1 ? 'them' : 'it'})`]
      : []),
    ...(left.length > 0
      ? [
          `leaving ${left.join(' and ')} running (${left.length > 1 ? 'they were' : 'it was'} running before this run)`,
        ]
      : []),
  ];
  return `clusters: ${parts.length > 0 ? parts.join('; ') : 'none brought up'}`;
}
