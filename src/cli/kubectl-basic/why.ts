// The why-walk: from an object down its tree to the first thing that blocks it, with the evidence.
import type { Condition } from '../../apis/index.ts';
import { conditionOf } from './fields.ts';
import type { EventRecord, ObjectSource } from './source.ts';
import { type ContainerReadiness, containerProblem, unreadyContainers } from './summary.ts';
import type { TreeNode } from './tree.ts';

export interface Finding {
  /** False: nothing blocks the object, it is Ready. */
  blocked: boolean;
  /** kind/name from the object down to the blocker (one element when the object blocks itself). */
  path: string[];
  /** What blocks it, in a sentence. */
  summary: string;
  /** The conditions, container states and Events that show it. */
  evidence: string[];
}

/** What the walk found at one node, before the path up to the root is added. */
interface Blocker {
  node: TreeNode;
  summary: string;
  evidence: string[];
  /** The node below that blocks this one, when the walk went further down. */
  below?: Found;
  /** Words put before the deepest blocker's summary, saying how this node depends on it. */
  lead?: string;
}

type Found = Blocker | undefined;

/**
 * Reasons a Machine reports on InfrastructureReady when the Machine itself cannot go on: the answer
 * is the Machine's condition, not anything under it.
 */
const MACHINE_LEVEL_REASONS = new Set([
  'WaitingForBackupFinalizer',
  'InfrastructureNotFound',
  'ContractNotDeclared',
  'CrossNamespaceReference',
  'InfrastructureOwnedByOther',
  'InfrastructureNotAdoptable',
  'ContractViolation',
  'InfrastructureForbidden',
  'InfrastructureDeleted',
]);

/**
 * Ready reasons of a provider whose create the API server refused (a PodMachine's; any provider may
 * use them): the answer is the provider's condition, which quotes the server.
 */
const REFUSED: Record<string, string> = { PodRefused: 'its pod', ClaimRefused: 'a claim' };

const label = (node: TreeNode) => `${node.kind}/${node.name}`;

type Probe = 'startup' | 'readiness' | 'liveness';

/** The kubelet's Event for a failing probe: Warning Unhealthy "Readiness probe failed: ...". */
const PROBE_EVENT = /^(Startup|Readiness|Liveness) probe (?:failed|errored)\b/;
const CONTAINER_FIELD = /^spec\.containers\{(.+)\}$/;

interface ProbeFailure {
  probe: Probe;
  /** The container the Event names (its fieldPath); undefined when it names none. */
  container: string | undefined;
  event: EventRecord;
}

/** The latest Event of each failing probe of each container, newest first. */
function probeFailures(events: EventRecord[]): ProbeFailure[] {
  const found: ProbeFailure[] = [];
  for (const event of events) {
    if (event.type !== 'Warning' || event.reason !== 'Unhealthy') continue;
    const match = PROBE_EVENT.exec(event.message);
    if (!match?.[1]) continue;
    const probe = match[1].toLowerCase() as Probe;
    const container = CONTAINER_FIELD.exec(event.fieldPath ?? '')?.[1];
    if (found.some((f) => f.probe === probe && f.container === container)) continue;
    found.push({ probe, container, event });
  }
  return found;
}

/** What a failing probe does to its container. */
const PROBE_EFFECT: Record<Probe, string> = {
  startup: 'its startup probe fails, so it has not started',
  readiness: 'its readiness probe fails',
  liveness: 'its liveness probe fails, so the kubelet restarts it',
};

function describeProbe(failure: ProbeFailure): string {
  const { count, message } = failure.event;
  return `${PROBE_EFFECT[failure.probe]}${count > 1 ? ` (x${count})` : ''}: ${message}`;
}

/**
 * The probe that keeps `container` from being ready: its startup probe while it has not started,
 * else its readiness probe, else its liveness probe.
 */
function blockingProbe(container: ContainerReadiness, failures: ProbeFailure[]): ProbeFailure | undefined {
  const of = failures.filter((f) => f.container === undefined || f.container === container.container);
  const order: Probe[] =
    container.started === false ? ['startup', 'readiness', 'liveness'] : ['readiness', 'liveness', 'startup'];
  for (const probe of order) {
    const failure = of.find((f) => f.probe === probe);
    if (failure) return failure;
  }
  return undefined;
}

function describeContainer(c: ContainerReadiness): string {
  const started = c.started === undefined ? '' : ` started=${c.started}`;
  const last = c.lastTermination ? `, last ended: ${c.lastTermination}` : '';
  return `container ${c.container} ready=false${started} restartCount=${c.restartCount}${last}`;
}

export function describeCondition(c: Condition): string {
  return `condition ${c.type}=${c.status}${c.reason ? ` ${c.reason}` : ''}${c.message ? `: ${c.message}` : ''}`;
}

function describeEvent(e: EventRecord, now: number): string {
  const when = e.time ? ` ${ageText(e.time, now)} ago` : '';
  const times = e.count > 1 ? ` (x${e.count})` : '';
  return `event ${e.type} ${e.reason}${when}${times}: ${e.message}`;
}

export function ageText(time: string, now: number): string {
  const ms = now - Date.parse(time);
  if (Number.isNaN(ms)) return '<unknown>';
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 120) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h`;
  return `${Math.floor(h / 24)}d`;
}

const EVENT_LINE = /^(.*?event (?:Warning|Normal) \S+[^:]*): (.*)$/s;

/**
 * An Event often says what a condition already says: its line then keeps when and how often it
 * happened, and drops the repeated message.
 */
function withoutRepeats(summary: string, evidence: string[]): string[] {
  return evidence.map((line, i) => {
    const match = EVENT_LINE.exec(line);
    const message = match?.[2];
    if (!match || !message) return line;
    const said = [summary, ...evidence.slice(0, i)].some((earlier) => earlier.includes(message));
    return said ? `${match[1]}: (the same message)` : line;
  });
}

export class WhyWalk {
  readonly #source: ObjectSource;
  readonly #now: number;

  constructor(source: ObjectSource, now: number) {
    this.#source = source;
    this.#now = now;
  }

  async explain(root: TreeNode): Promise<Finding> {
    const found = await this.#walk(root);
    if (!found) {
      return {
        blocked: false,
        path: [label(root)],
        summary: `nothing blocks it: ${root.ready === undefined ? root.status || 'Ready' : 'Ready'}`,
        evidence: [],
      };
    }
    const path: string[] = [];
    let deepest: Blocker = found;
    for (let b: Found = found; b; b = b.below) {
      path.push(label(b.node));
      deepest = b;
    }
    const evidence: string[] = [];
    for (let b: Found = found; b; b = b.below)
      evidence.push(...b.evidence.map((e) => `${label(b.node)}: ${e}`));
    let lead = '';
    for (let b: Found = found; b; b = b.below) lead += b.lead ?? '';
    const summary = `${lead}${deepest.summary}`;
    return { blocked: true, path, summary, evidence: withoutRepeats(summary, evidence) };
  }

  /**
   * The latest Warning Event about `node` (Normal ones, such as Scheduled, explain nothing), or the
   * latest of the given reasons whatever its type.
   */
  async #latestEvent(node: TreeNode, reasons?: string[]): Promise<string[]> {
    return this.#pickEvent(await this.#events(node), reasons);
  }

  #pickEvent(events: EventRecord[], reasons?: string[]): string[] {
    const pick = reasons
      ? events.find((e) => reasons.includes(e.reason))
      : events.find((e) => e.type === 'Warning');
    return pick ? [describeEvent(pick, this.#now)] : [];
  }

  async #events(node: TreeNode): Promise<EventRecord[]> {
    const uid = node.object?.metadata?.uid;
    return uid ? this.#source.events(node.namespace, uid) : [];
  }

  async #walk(node: TreeNode): Promise<Found> {
    if (node.missing) {
      return { node, summary: `${label(node)} does not exist (${node.message})`, evidence: [] };
    }
    switch (node.kind) {
      case 'BasicDeployment':
        return this.#deployment(node);
      case 'BasicReplicaSet':
        return this.#replicaSet(node);
      case 'Pod':
        return this.#pod(node);
      case 'Machine':
        return this.#machine(node);
      case 'VolumeBackup':
        return this.#volumeBackup(node);
      case 'PersistentVolumeClaim':
        return this.#claim(node);
      case 'Job':
        return this.#job(node);
      case 'StatefulSet':
        return this.#statefulSet(node);
      default:
        return this.#provider(node);
    }
  }

  /** Not Ready and nothing below explains it: the node's own Ready condition is the answer. */
  async #ownCondition(node: TreeNode, type = 'Ready'): Promise<Found> {
    const c = conditionOf(node.object, type);
    const summary = c
      ? `${label(node)} is not Ready: ${c.reason}${c.message ? `: ${c.message}` : ''}`
      : `${label(node)} has no ${type} condition yet: its controller has not reconciled it (is the operator running?)`;
    return {
      node,
      summary,
      evidence: [...(c ? [describeCondition(c)] : []), ...(await this.#latestEvent(node))],
    };
  }

  async #firstBlockedChild(node: TreeNode, kinds: string[]): Promise<Found> {
    for (const child of node.children) {
      if (!kinds.includes(child.kind) || child.ready !== false) continue;
      if (child.object?.metadata?.deletionTimestamp && child.kind === 'Pod') continue;
      const found = await this.#walk(child);
      if (found) return found;
    }
    return undefined;
  }

  async #deployment(node: TreeNode): Promise<Found> {
    if (node.ready) return undefined;
    const failure = conditionOf(node.object, 'ReplicaFailure');
    const below = await this.#firstBlockedChild(node, ['BasicReplicaSet']);
    const evidence: string[] = [];
    const progressing = conditionOf(node.object, 'Progressing');
    if (progressing?.status === 'False') evidence.push(describeCondition(progressing));
    if (failure?.status === 'True' && !below) {
      return {
        node,
        summary: `pod creates are refused: ${failure.message}`,
        evidence: [describeCondition(failure)],
      };
    }
    if (below) return { node, summary: below.summary, evidence, below };
    return this.#ownCondition(node);
  }

  async #replicaSet(node: TreeNode): Promise<Found> {
    if (node.ready) return undefined;
    const failure = conditionOf(node.object, 'ReplicaFailure');
    if (failure?.status === 'True') {
      const quota = /quota/i.test(failure.message) ? ' (a ResourceQuota)' : '';
      return {
        node,
        summary: `${label(node)}: pod creates are refused${quota}: ${failure.message}`,
        evidence: [describeCondition(failure), ...(await this.#latestEvent(node, ['FailedCreate']))],
      };
    }
    const below = await this.#firstBlockedChild(node, ['Pod']);
    if (below) return { node, summary: below.summary, evidence: [], below };
    return this.#ownCondition(node);
  }

  async #pod(node: TreeNode): Promise<Found> {
    if (node.ready !== false || !node.object) return undefined;
    const events = await this.#events(node);
    const probes = probeFailures(events);
    const problem = containerProblem(node.object);
    if (problem) {
      const restarts = problem.restartCount > 0 ? ` (restarted ${problem.restartCount} times)` : '';
      // A crash loop a probe causes: the kubelet kills a container whose liveness or startup probe fails.
      const killer = probes.find(
        (p) => p.probe !== 'readiness' && (p.container === undefined || p.container === problem.container),
      );
      return {
        node,
        summary: `${label(node)}: container ${problem.container} is ${problem.state}: ${problem.reason}${problem.message ? `: ${problem.message}` : ''}${restarts}${killer ? `; ${describeProbe(killer)}` : ''}`,
        evidence: [
          `container ${problem.container} state ${problem.state} ${problem.reason}`,
          ...(killer ? [describeEvent(killer.event, this.#now)] : this.#pickEvent(events)),
        ],
      };
    }
    const scheduled = conditionOf(node.object, 'PodScheduled');
    if (scheduled?.status === 'False') {
      return {
        node,
        summary: `${label(node)} is not scheduled: ${scheduled.reason}: ${scheduled.message}`,
        evidence: [describeCondition(scheduled), ...this.#pickEvent(events)],
      };
    }
    const ready = conditionOf(node.object, 'Ready');
    const readyEvidence = ready ? [describeCondition(ready)] : [];
    for (const container of unreadyContainers(node.object)) {
      const failure = blockingProbe(container, probes);
      if (!failure) continue;
      const others = probes.filter(
        (p) => p !== failure && (p.container === undefined || p.container === container.container),
      );
      return {
        node,
        summary: `${label(node)}: container ${container.container} is not ready: ${describeProbe(failure)}`,
        evidence: [
          describeContainer(container),
          ...readyEvidence,
          ...[failure, ...others].map((p) => describeEvent(p.event, this.#now)),
        ],
      };
    }
    const phase = node.status;
    return {
      node,
      summary: `${label(node)} is ${phase} but never became Ready${ready?.reason ? ` (${ready.reason})` : ''}`,
      evidence: [...readyEvidence, ...this.#pickEvent(events)],
    };
  }

  async #machine(node: TreeNode): Promise<Found> {
    const machine = node.object;
    if (!machine) return undefined;
    if (machine.metadata?.deletionTimestamp) {
      const backupCondition = conditionOf(machine, 'VolumeBackup');
      if (backupCondition?.status === 'True') return this.#ownCondition(node);
      const below = await this.#firstBlockedChild(node, ['VolumeBackup']);
      const evidence = backupCondition ? [describeCondition(backupCondition)] : [];
      if (below) {
        return {
          node,
          summary: below.summary,
          lead: `${label(node)} waits for its backup: `,
          evidence,
          below,
        };
      }
      if (backupCondition) {
        return {
          node,
          summary: `${label(node)} waits for its backup: ${backupCondition.reason}: ${backupCondition.message}`,
          evidence,
        };
      }
      return this.#ownCondition(node);
    }
    if (node.ready) return undefined;
    const infra = conditionOf(machine, 'InfrastructureReady');
    if (infra && infra.status !== 'True' && MACHINE_LEVEL_REASONS.has(infra.reason)) {
      return {
        node,
        summary: `${label(node)} waits: ${infra.reason}: ${infra.message}`,
        evidence: [describeCondition(infra), ...(await this.#latestEvent(node))],
      };
    }
    const provider = node.children.find((c) => c.kind !== 'VolumeBackup');
    if (provider && provider.ready !== true) {
      const below = await this.#walk(provider);
      if (below) {
        return { node, summary: below.summary, evidence: infra ? [describeCondition(infra)] : [], below };
      }
    }
    return this.#ownCondition(node);
  }

  async #provider(node: TreeNode): Promise<Found> {
    if (node.ready) return undefined;
    const ready = conditionOf(node.object, 'Ready');
    const refused = ready?.status === 'False' ? REFUSED[ready.reason] : undefined;
    if (ready && refused) {
      return {
        node,
        summary: `${label(node)} cannot create ${refused}: ${ready.reason}: ${ready.message}`,
        evidence: [describeCondition(ready), ...(await this.#latestEvent(node))],
      };
    }
    const below = await this.#firstBlockedChild(node, ['PersistentVolumeClaim', 'StatefulSet', 'Pod']);
    if (below) return { node, summary: below.summary, evidence: [], below };
    return this.#ownCondition(node);
  }

  /**
   * A StatefulSet a provider owns: its pod that blocks it, else why it has none (kube-controller-
   * manager's FailedCreate Event quotes the API server's refusal).
   */
  async #statefulSet(node: TreeNode): Promise<Found> {
    if (node.ready) return undefined;
    const below = await this.#firstBlockedChild(node, ['Pod']);
    if (below) return { node, summary: below.summary, evidence: [], below };
    const events = await this.#events(node);
    const warning = events.find((e) => e.type === 'Warning');
    return {
      node,
      summary:
        warning?.reason === 'FailedCreate'
          ? `${label(node)} cannot create its pod: ${warning.message}`
          : `${label(node)} has ${node.status}`,
      evidence: this.#pickEvent(events),
    };
  }

  async #volumeBackup(node: TreeNode): Promise<Found> {
    if (node.ready) return undefined;
    const ready = conditionOf(node.object, 'Ready');
    // The copy Job that failed last (names end in the attempt number, which does not sort as text).
    const failedJobs = node.children
      .filter((c) => c.kind === 'Job')
      .flatMap((job) => {
        const failed = conditionOf(job.object, 'Failed');
        return failed?.status === 'True' ? [{ job, failed }] : [];
      })
      .sort((a, b) => b.job.created.localeCompare(a.job.created) || b.job.name.localeCompare(a.job.name));
    const lastFailure = failedJobs[0];
    const failedJob = lastFailure?.job;
    const evidence = [
      ...(ready ? [describeCondition(ready)] : []),
      ...(lastFailure ? [`${label(lastFailure.job)} ${describeCondition(lastFailure.failed)}`] : []),
      ...(await this.#latestEvent(node)),
    ];
    if (ready && (ready.reason === 'BackupFailed' || ready.reason === 'DeadlineExceeded')) {
      return { node, summary: `${label(node)} failed: ${ready.reason}: ${ready.message}`, evidence };
    }
    if (failedJob) {
      return {
        node,
        summary: `${label(node)}: its copy keeps failing (${ready?.reason ?? 'no Ready condition'}): ${failedJob.reason}: ${failedJob.message}`,
        evidence,
      };
    }
    const below = await this.#firstBlockedChild(node, ['PersistentVolumeClaim']);
    if (below) return { node, summary: below.summary, evidence, below };
    return this.#ownCondition(node);
  }

  async #claim(node: TreeNode): Promise<Found> {
    if (node.ready) return undefined;
    return {
      node,
      summary: `${label(node)} is ${node.status}, not Bound`,
      evidence: await this.#latestEvent(node),
    };
  }

  async #job(node: TreeNode): Promise<Found> {
    if (node.ready !== false) return undefined;
    const failed = conditionOf(node.object, 'Failed');
    return {
      node,
      summary: failed
        ? `${label(node)} failed: ${failed.reason}: ${failed.message}`
        : `${label(node)} is ${node.status}`,
      evidence: [...(failed ? [describeCondition(failed)] : []), ...(await this.#latestEvent(node))],
    };
  }
}
