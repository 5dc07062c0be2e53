import type { ProcStats } from '../../e2e/support/operator-process.ts';
import type { ResourceType } from '../../src/runtime/client/resource.ts';
import type { IdleCost, IdleSource } from '../measure/idle.ts';
import type { HeapAfterGc } from '../measure/inspector.ts';
import type { ReactionLatency } from '../measure/latency.ts';
import type { ScalableObject } from '../measure/scale-ups.ts';
import type { KcmStartup, OperatorStartup } from '../measure/startup.ts';
import type { SideTrace } from '../trace.ts';

/**
 * One side of the benchmark: a controller and the workload it rolls out, N deployments of R
 * replicas in its own kinds. kube-controller-manager (sides/kcm.ts) and the operator
 * (sides/operator.ts) are the two; sides/run.ts measures either the same way.
 */
export interface BenchSide<T extends ScalableObject> {
  /** As the figures name it: "kube-controller-manager", "basic-operator". */
  readonly name: string;
  /** What the side runs, logged before it. */
  readonly title: string;
  /** Its own namespace, fresh for each run and deleted after it. */
  readonly namespace: string;
  /** The deployments' kind, and the kind of the sets they own. */
  readonly deployments: ResourceType<T>;
  readonly sets: ResourceType<ScalableObject>;
  /** Deployment `i` of the workload, in the side's namespace. */
  deployment(i: number): T;
  /** The deployment is rolled out, for its current generation. */
  isReady(deployment: T): boolean;
  /** The series that counts its controllers' work in its /metrics, and those controllers. */
  readonly work: Pick<IdleSource, 'reconcileSeries' | 'controllers'>;
  /**
   * The controller's process when it runs apart from the control plane (the operator): its CPU is
   * counted under this name. kube-controller-manager is one of the control plane's processes.
   */
  readonly ownProcess?: string;
  /** Starts the controller (the operator) or finds it (kube-controller-manager), in the fresh namespace. */
  start(): Promise<SideController>;
}

/** The side's controller process, as the bench sees it while the side runs. */
export interface SideController {
  /** Its pid, when the bench sees the process (not kind's kube-controller-manager). */
  readonly pid: number | undefined;
  /** The memory limit it runs in, if any. */
  readonly memoryLimitMiB?: number | undefined;
  /** Its peak RSS and CPU now, when the bench sees the process. */
  stats(): ProcStats | undefined;
  /** Its /metrics text. */
  metrics(): Promise<string>;
  /** Rejects once the process exits (while the workload rolls out, that fails the side). */
  exited?(): Promise<never>;
  /** Samples each second of the rollout (--trace). */
  trace?(): SideTrace;
  /** Its live heap after a full GC, once the side is settled. */
  liveHeap?(): Promise<HeapAfterGc>;
  /** Restarts the process with the workload present and times its start. */
  restart?(): Promise<OperatorStartup | KcmStartup>;
  /** Stops the process, when the bench started it. */
  stop?(): Promise<unknown>;
}

export interface SideResult {
  seconds: number;
  podsPerSecond: number;
  /** Pods created in each second of the side. */
  timeline: number[];
  /** Pods first seen bound to a node, and Ready, in each second. */
  boundTimeline: number[];
  readyTimeline: number[];
  peakRssMiB?: number;
  cpuSeconds?: number;
  /** CPU seconds of every process on the machine from the first create to ready (local provider). */
  rolloutCpu?: Record<string, number>;
  /** RSS once the side's workload is settled, after the idle window. */
  settledRssMiB?: number;
  /** The memory limit the operator ran in (a cgroup), if any. */
  memoryLimitMiB?: number;
  /** The operator's live heap after a full GC, at the end of its side. */
  heap?: HeapAfterGc;
  latency?: ReactionLatency;
  idle?: IdleCost;
  startup?: OperatorStartup | KcmStartup;
  /** Restarts the side's controller process with the workload present and times its start. */
  restart?: () => Promise<OperatorStartup | KcmStartup>;
  /** Stops what the side left running (the operator process), when it is not restarted. */
  stop?: () => Promise<unknown>;
}

/** A side's result with what the cluster did during it: CPU per process and the API requests that wrote. */
export type ObservedSide = SideResult & { machine: string };

/** The spec of deployment `i`: R replicas of a pause container, selected by its own label. */
export function deploymentSpec(i: number, replicas: number) {
  return {
    replicas,
    selector: { matchLabels: { app: `d-${i}` } },
    template: {
      metadata: { labels: { app: `d-${i}` } },
      spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
    },
  };
}
