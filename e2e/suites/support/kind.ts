import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it, type TestContext } from 'node:test';
import type { CoreV1Event, V1Deployment, V1Lease, V1Pod } from '@kubernetes/client-node';
import type { Machine } from '../../../src/apis/index.ts';
import type { ClusterInfo } from '../../providers/provider.ts';
import { waitFor } from '../../support/wait.ts';
import { e2eCluster } from './cluster.ts';
import { ClusterTools } from './kube.ts';
import { InClusterOperator } from './operator.ts';
import {
  HelmRelease,
  installCrds,
  type Manifest,
  operatorDeployment,
  tearDownRelease,
  type Values,
} from './release.ts';

/**
 * Shared by the suites of e2e/suites/kind: checks only real containers can make. Each file installs
 * a release of its own (the chart as users install it, the image kind's provider loaded) that
 * watches only its own workload namespace and holds its own Lease, so it can run next to any other
 * suite on the same cluster.
 */

/** False on kind; otherwise why a kind-only suite skips itself. */
export const KIND_ONLY: false | string =
  process.env.E2E_PROVIDER === 'kind'
    ? false
    : `needs real containers: runs only on kind (E2E_PROVIDER=kind), and E2E_PROVIDER is ${process.env.E2E_PROVIDER ?? 'unset'}`;

/** A line on stderr, prefixed so it stands out of the spec reporter's output. */
export function note(message: string): void {
  process.stderr.write(`[kind] ${message}\n`);
}

export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** Thrown from a wait's check: stop waiting now, this will not get better. */
export class GiveUp extends Error {}

/**
 * waitFor (e2e/support/wait.ts) with a readable failure: on a timeout, or when the check throws
 * GiveUp, the error carries what `diagnose` reports (object status, events, operator logs).
 */
export async function waitUntil<T>(
  what: string,
  check: () => Promise<T | undefined | false>,
  options: { timeoutMs: number; intervalMs?: number; diagnose: () => Promise<string> },
): Promise<T> {
  let gaveUp: GiveUp | undefined;
  const outcome = await waitFor(
    what,
    async (): Promise<{ value: T } | undefined> => {
      try {
        const value = await check();
        return value === undefined || value === false ? undefined : { value };
      } catch (err) {
        if (!(err instanceof GiveUp)) throw err;
        gaveUp = err;
        return { value: undefined as T };
      }
    },
    { timeoutMs: options.timeoutMs, intervalMs: options.intervalMs ?? 500 },
  ).catch(async (err: unknown) => {
    const message = err instanceof Error ? err.message : String(err);
    throw new Error(`${message}\n${await options.diagnose().catch((e: unknown) => String(e))}`);
  });
  if (gaveUp) {
    throw new Error(`gave up waiting for ${what}: ${gaveUp.message}\n${await options.diagnose()}`);
  }
  return outcome.value;
}

export interface ReleaseOptions {
  /** Part of the release's name: bo-kind-<topic>-<random>. */
  topic: string;
  /** Labels both namespaces with pod-security.kubernetes.io/enforce=<level> before the install. */
  podSecurity?: 'restricted' | 'baseline';
  /** Chart values on top of the image, watchNamespaces and leaderElection.id. */
  values?: Values;
}

export interface LeaseState {
  holderIdentity: string;
  /** The pod named by the holder identity (<pod>_<pid>_<random>); '' when nobody holds it. */
  pod: string;
  transitions: number;
  acquireTime: string;
}

/**
 * One release of charts/basic-operator on kind, in namespace bo-kind-<topic>-<random>, watching only
 * <namespace>-workload, with Lease <release>.basicoperator.dev; the operator's logs are followed from
 * every pod for failure messages.
 */
export class KindRelease {
  readonly name: string;
  readonly namespace: string;
  readonly workloadNamespace: string;
  readonly leaseName: string;
  readonly cluster: ClusterInfo;
  readonly tools: ClusterTools;
  readonly helm: HelmRelease;
  readonly operator: InClusterOperator;
  readonly workdir: string;
  readonly values: Values;
  manifests: Manifest[] = [];
  private readonly podSecurity: ReleaseOptions['podSecurity'];
  private readonly started = Date.now();
  private failed = false;

  private constructor(cluster: ClusterInfo, options: ReleaseOptions) {
    this.cluster = cluster;
    this.tools = new ClusterTools(cluster);
    this.name = `bo-kind-${options.topic}-${randomBytes(3).toString('hex')}`;
    this.namespace = this.name;
    this.workloadNamespace = `${this.name}-workload`;
    this.leaseName = `${this.name}.basicoperator.dev`;
    this.workdir = mkdtempSync(join(tmpdir(), `${this.name}-`));
    this.helm = new HelmRelease(this.tools, this.name, this.namespace, this.workdir);
    this.operator = new InClusterOperator(cluster);
    this.podSecurity = options.podSecurity;
    this.values = {
      ...this.operator.values,
      watchNamespaces: [this.workloadNamespace],
      leaderElection: { id: this.leaseName },
      ...options.values,
    };
  }

  /**
   * The release of a suite, not installed yet: assign it before calling install(), so that the
   * suite's after() cleans up whatever a failed install left.
   */
  static async create(options: ReleaseOptions): Promise<KindRelease> {
    const release = new KindRelease(await e2eCluster(), options);
    note(
      `release ${release.name}, workload namespace ${release.workloadNamespace}, files ${release.workdir}`,
    );
    return release;
  }

  /** Creates both namespaces, applies the CRDs, `helm install --wait`s and follows the operator's logs. */
  async install(): Promise<void> {
    try {
      await installCrds(this.tools);
      for (const namespace of [this.namespace, this.workloadNamespace]) {
        await this.kubectlOk(['create', 'namespace', namespace]);
        const labels = ['basicoperator.dev/test=true'];
        // The suites scrape the metrics from the release's namespace: labelled as docs/install.md
        // has a user label Prometheus's, so the chart's NetworkPolicy lets the scrapes in.
        if (namespace === this.namespace) labels.push('metrics=enabled');
        if (this.podSecurity) {
          labels.push(
            `pod-security.kubernetes.io/enforce=${this.podSecurity}`,
            'pod-security.kubernetes.io/enforce-version=latest',
          );
        }
        await this.kubectlOk(['label', 'namespace', namespace, ...labels]);
      }
      this.manifests = await this.helm.template(this.values);
      const started = Date.now();
      await this.helm.install(this.values);
      await this.operator.start(this.deployment);
      note(`${this.name}: helm install --wait and rollout in ${seconds(Date.now() - started)}`);
    } catch (err) {
      this.markFailed();
      const message = err instanceof Error ? err.message : String(err);
      throw new Error(
        `installing release ${this.name} failed: ${message}\n${await this.diagnose([], this.namespace)}`,
      );
    }
  }

  get deployment(): V1Deployment & Manifest {
    return operatorDeployment(this.manifests);
  }

  /** The selector of the operator's pods, as kubectl takes it. */
  get operatorSelector(): string {
    return Object.entries(this.deployment.spec?.selector.matchLabels ?? {})
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
  }

  kubectlOk(args: string[], input?: string): Promise<string> {
    return this.tools.kubectlOk(args, input);
  }

  /** `kubectl apply -f -` of objects given as plain values. */
  async apply(...objects: object[]): Promise<void> {
    await this.kubectlOk(
      ['apply', '-f', '-'],
      JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }),
    );
  }

  async get<T>(ref: string, namespace = this.workloadNamespace): Promise<T> {
    return this.tools.getJson<T>([ref, '-n', namespace]);
  }

  /** The object, or undefined when it does not exist. */
  async find<T>(ref: string, namespace = this.workloadNamespace): Promise<T | undefined> {
    const result = await this.tools.kubectl([
      'get',
      ref,
      '-n',
      namespace,
      '-o',
      'json',
      '--ignore-not-found',
    ]);
    if (result.code !== 0) throw new Error(`kubectl get ${ref} failed: ${result.stderr}`);
    return result.stdout.trim() === '' ? undefined : (JSON.parse(result.stdout) as T);
  }

  async list<T>(type: string, namespace = this.workloadNamespace, selector?: string): Promise<T[]> {
    return this.tools.list<T>(type, namespace, selector);
  }

  /** The operator's pods that are not being deleted. */
  async operatorPods(): Promise<V1Pod[]> {
    const pods = await this.list<V1Pod>('pods', this.namespace, this.operatorSelector);
    return pods.filter((p) => !p.metadata?.deletionTimestamp);
  }

  /**
   * Why each restarted operator pod restarted, when it was not a designed exit. The operator exits
   * (code 1) when it loses its leader lease or when the API server does not answer at start, as
   * kube-controller-manager does; an API server too loaded to answer within the renew deadline (or
   * 10 s at start) causes that, and such restarts are only noted. Anything else (a crash, the
   * liveness probe, OOMKilled) is returned with the container's last state and its previous log's end.
   */
  async unexpectedRestarts(pods: V1Pod[]): Promise<string[]> {
    const problems: string[] = [];
    for (const pod of pods) {
      const status = containerStatus(pod, 'manager');
      if ((status?.restartCount ?? 0) === 0) continue;
      const name = pod.metadata?.name ?? '';
      const previous = await this.tools.kubectl([
        'logs',
        name,
        '-c',
        'manager',
        '-n',
        this.namespace,
        '--previous',
      ]);
      const lines = previous.stdout.split('\n').filter(Boolean);
      if (lines.some((line) => DESIGNED_EXIT.test(line))) {
        note(`${name} restarted by design (${status?.restartCount}x): ${lines.slice(-3).join(' | ')}`);
        continue;
      }
      problems.push(
        `${name} restarted ${status?.restartCount} time(s), last state ${JSON.stringify(status?.lastState)}; ` +
          `its previous log ends:\n${lines.slice(-15).join('\n') || previous.stderr}`,
      );
    }
    return problems;
  }

  /** Waits for the chart's two operator pods to be Ready; returns them. */
  readyOperatorPods(timeoutMs = 120_000): Promise<V1Pod[]> {
    return this.waitFor(
      'two Ready operator pods',
      async () => {
        const pods = await this.operatorPods();
        return pods.length === 2 && pods.every(podReady) && pods;
      },
      { timeoutMs, namespace: this.namespace },
    );
  }

  /**
   * `helm test` of the release, asserted to pass. Without --logs: the hook's delete policy
   * (hook-succeeded) removes the pod before Helm reads its log.
   */
  async helmTest(): Promise<void> {
    const args = ['test', this.name, '-n', this.namespace, '--timeout', '90s'];
    let result = await this.tools.helm(args);
    if (result.code !== 0) {
      // A failed test pod stays (the delete policy keeps only failures): see failedToStartOnFreeze.
      const pods = await this.list<V1Pod>('pods', this.namespace, 'app.kubernetes.io/component=test');
      if (pods.some(failedToStartOnFreeze)) {
        note(
          'the helm test pod could not start (runc: unable to freeze, cgroup v1): running helm test again',
        );
        result = await this.tools.helm(args);
      }
    }
    assert.equal(result.code, 0, `helm test failed:\n${result.stderr}${result.stdout}`);
    assert.match(result.stdout, /TEST SUITE:\s+\S+-test-metrics[\s\S]*Phase:\s+Succeeded/);
  }

  async lease(): Promise<LeaseState | undefined> {
    const lease = await this.find<V1Lease>(`lease/${this.leaseName}`, this.namespace);
    if (!lease) return undefined;
    const holderIdentity = lease.spec?.holderIdentity ?? '';
    return {
      holderIdentity,
      pod: holderIdentity === '' ? '' : (holderIdentity.split('_')[0] ?? ''),
      transitions: lease.spec?.leaseTransitions ?? 0,
      acquireTime: String(lease.spec?.acquireTime ?? ''),
    };
  }

  /** Events of a namespace (events.k8s.io and core events alike), oldest first, as table lines. */
  async events(namespace = this.workloadNamespace): Promise<CoreV1Event[]> {
    const events = await this.list<CoreV1Event>('events', namespace);
    const time = (e: CoreV1Event) =>
      String(e.lastTimestamp ?? e.eventTime ?? e.metadata?.creationTimestamp ?? '');
    return events.sort((a, b) => time(a).localeCompare(time(b)));
  }

  /**
   * What a failure message needs: the status of `refs` (e.g. "machine/web"), the pods and the last
   * events of the workload namespace (and of the release namespace), and the operator's last log lines.
   */
  async diagnose(refs: string[] = [], namespace = this.workloadNamespace): Promise<string> {
    const parts: string[] = [];
    for (const ref of refs) {
      const result = await this.tools.kubectl(['get', ref, '-n', namespace, '-o', 'json']);
      if (result.code !== 0) {
        parts.push(`--- ${ref}: ${result.stderr.trim()}`);
        continue;
      }
      const object = JSON.parse(result.stdout) as {
        status?: unknown;
        metadata?: { deletionTimestamp?: string };
      };
      const deleting = object.metadata?.deletionTimestamp
        ? ` (deleting since ${object.metadata.deletionTimestamp})`
        : '';
      parts.push(`--- ${ref}${deleting} status:\n${JSON.stringify(object.status ?? {}, null, 2)}`);
    }
    for (const ns of new Set([namespace, this.namespace])) {
      const pods = await this.tools.kubectl(['get', 'pods,jobs,pvc', '-n', ns, '-o', 'wide']);
      parts.push(`--- pods, jobs and claims in ${ns}:\n${(pods.stdout || pods.stderr).trim()}`);
      const events = await this.events(ns).catch(() => []);
      parts.push(
        `--- last events in ${ns}:\n${events
          .slice(-25)
          .map(
            (e) =>
              `${e.type} ${e.reason} ${e.involvedObject.kind}/${e.involvedObject.name}: ${(e.message ?? '').trim()}`,
          )
          .join('\n')}`,
      );
    }
    parts.push(this.operator.describe());
    return parts.join('\n');
  }

  /** waitUntil with this release's diagnostics for `refs`. */
  waitFor<T>(
    what: string,
    check: () => Promise<T | undefined | false>,
    options: { timeoutMs: number; intervalMs?: number; refs?: string[]; namespace?: string },
  ): Promise<T> {
    return waitUntil(what, check, {
      ...options,
      diagnose: () => this.diagnose(options.refs ?? [], options.namespace),
    });
  }

  /** Marks the run failed: the workdir and the operator's whole log are kept. */
  markFailed(): void {
    this.failed = true;
  }

  /**
   * Uninstalls the release and deletes both namespaces (removing the operator's finalizers first:
   * without the operator nobody would); keeps the operator's log when something failed.
   */
  async cleanup(): Promise<void> {
    const lines = await this.operator.stop().catch(() => []);
    if (this.failed) {
      writeFileSync(join(this.workdir, 'operator.log'), `${lines.join('\n')}\n`);
      note(`${this.name}: failed; operator logs kept in ${join(this.workdir, 'operator.log')}`);
    }
    await tearDownRelease(this.tools, this.helm, this.workloadNamespace);
    if (!this.failed) rmSync(this.workdir, { recursive: true, force: true });
    note(`${this.name}: ${this.failed ? 'FAILED' : 'done'}, wall time ${seconds(Date.now() - this.started)}`);
  }
}

/**
 * One check of a suite: an it() with a deadline whose failure marks the release failed, so its
 * workdir and the operator's whole log are kept.
 */
export function check(
  release: () => KindRelease | undefined,
  name: string,
  timeoutMs: number,
  body: (t: TestContext) => Promise<void>,
): void {
  it(name, { timeout: timeoutMs }, async (t) => {
    try {
      await body(t);
    } catch (err) {
      release()?.markFailed();
      throw err;
    }
  });
}

/** The operator's own exits, logged before it ends with code 1 (see unexpectedRestarts). */
const DESIGNED_EXIT = /leader lease lost; exiting|cannot reach the Kubernetes API server/;

/** The container status of `pod`'s container `name` (its first when omitted). */
export function containerStatus(pod: V1Pod, name?: string) {
  const statuses = pod.status?.containerStatuses ?? [];
  return name ? statuses.find((s) => s.name === name) : statuses[0];
}

export function podReady(pod: V1Pod): boolean {
  return pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

/** A pod that runs one shell command with the workload image and passes Pod Security `restricted`. */
export function restrictedPod(
  name: string,
  namespace: string,
  image: string,
  script: string,
  labels: Record<string, string> = {},
): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels },
    spec: {
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      securityContext: restrictedPodSecurity,
      containers: [
        {
          name: 'main',
          image,
          imagePullPolicy: 'IfNotPresent',
          command: ['sh', '-c', script],
          securityContext: restrictedContainerSecurity,
        },
      ],
    },
  };
}

export const restrictedPodSecurity = {
  runAsNonRoot: true,
  runAsUser: 65532,
  runAsGroup: 65532,
  seccompProfile: { type: 'RuntimeDefault' },
};

export const restrictedContainerSecurity = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  capabilities: { drop: ['ALL'] },
};

/** Runs `pod` to completion and returns its log; throws with its status when it does not succeed. */
/**
 * runc on a cgroup v1 host with the systemd cgroup driver (kind's) now and then fails to start a
 * container under load: `error setting cgroup config for procHooks process: unable to freeze`
 * (StartError, before any code of the container ran). A kubelet restarts such a container; a pod
 * with restartPolicy Never just fails, so the suites run those once more.
 */
export function failedToStartOnFreeze(pod: V1Pod): boolean {
  return (pod.status?.containerStatuses ?? []).some(
    (c) =>
      c.state?.terminated?.reason === 'StartError' &&
      /unable to freeze/.test(c.state.terminated.message ?? ''),
  );
}

/** Runs a pod to completion (twice at most, see failedToStartOnFreeze) and returns its log. */
export async function runPod(release: KindRelease, pod: V1Pod, timeoutMs = 90_000): Promise<string> {
  const namespace = pod.metadata?.namespace ?? '';
  const ref = `pod/${pod.metadata?.name}`;
  for (let attempt = 1; ; attempt++) {
    await release.apply(pod);
    const done = await release.waitFor(
      `${ref} in ${namespace} to finish`,
      async () => {
        const live = await release.get<V1Pod>(ref, namespace);
        const phase = live.status?.phase;
        return (phase === 'Succeeded' || phase === 'Failed') && live;
      },
      { timeoutMs, refs: [ref], namespace },
    );
    if (done.status?.phase !== 'Succeeded' && attempt === 1 && failedToStartOnFreeze(done)) {
      note(`${ref} could not start (runc: unable to freeze, cgroup v1): running it again`);
      await release.kubectlOk(['delete', ref, '-n', namespace, '--wait=true']);
      continue;
    }
    const log = await release.kubectlOk(['logs', ref, '-n', namespace]);
    if (done.status?.phase !== 'Succeeded') {
      throw new Error(
        `${ref} ended ${done.status?.phase}: ${JSON.stringify(containerStatus(done)?.state)}\n--- its log:\n${log}`,
      );
    }
    await release.tools.kubectl(['delete', ref, '-n', namespace, '--wait=false']);
    return log;
  }
}

/** Waits until machine/`name` is Running and Ready; gives up at once if it fails. */
export function waitForMachineReady(release: KindRelease, name: string, timeoutMs: number): Promise<Machine> {
  return release.waitFor(
    `machine/${name} to be Running and Ready`,
    async () => {
      const m = await release.get<Machine>(`machine/${name}`);
      if (m.status?.phase === 'Failed')
        throw new GiveUp(`machine/${name} failed: ${JSON.stringify(m.status)}`);
      return m.status?.phase === 'Running' && m.status.ready === true && m;
    },
    { timeoutMs, refs: [`machine/${name}`, `podmachine/${name}`] },
  );
}
