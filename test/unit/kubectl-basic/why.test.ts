import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseArgs } from '../../../src/cli/kubectl-basic/args.ts';
import { renderFinding } from '../../../src/cli/kubectl-basic/render.ts';
import { EXIT_BLOCKED, EXIT_READY, execute } from '../../../src/cli/kubectl-basic/run.ts';
import { buildTree } from '../../../src/cli/kubectl-basic/tree.ts';
import { WhyWalk } from '../../../src/cli/kubectl-basic/why.ts';
import type { Unstructured } from '../../../src/runtime/client/object.ts';
import { NOW, NS, type RecordedSource } from './recorded.ts';
import {
  crashLooping,
  failingBackup,
  failingLivenessProbe,
  failingReadinessProbe,
  failingStartupProbe,
  missingProvider,
  neverReadyRollout,
  quotaRefused,
  readyMachine,
  refusedPod,
  statefulSetMachine,
  waitingForFinalizer,
} from './scenes.ts';

async function why(source: RecordedSource, kind: string, obj: Unstructured) {
  return new WhyWalk(source, NOW).explain(await buildTree(source, kind, obj));
}

describe('kubectl basic why', () => {
  it('a rollout held by a pod whose readiness probe fails: the pod, its container, its Ready condition and the probe Event', async () => {
    const { source, bd } = neverReadyRollout();
    const finding = await why(source, 'BasicDeployment', bd);
    assert.equal(finding.blocked, true);
    assert.deepEqual(finding.path, ['BasicDeployment/web', 'BasicReplicaSet/web-new', 'Pod/web-new-b']);
    assert.equal(
      renderFinding(finding),
      [
        'BasicDeployment/web is blocked: Pod/web-new-b: container app is not ready: its readiness probe fails (x12): Readiness probe failed: connection refused',
        '  path: BasicDeployment/web -> BasicReplicaSet/web-new -> Pod/web-new-b',
        '  Pod/web-new-b: container app ready=false restartCount=0',
        '  Pod/web-new-b: condition Ready=False ContainersNotReady: containers with unready status: [app]',
        '  Pod/web-new-b: event Warning Unhealthy 30s ago (x12): (the same message)',
      ].join('\n'),
    );
  });

  it('a pod that runs and never becomes Ready, with no probe Event: its Ready condition', async () => {
    const { source, bd } = neverReadyRollout({ probeEvent: false });
    const finding = await why(source, 'BasicDeployment', bd);
    assert.equal(finding.summary, 'Pod/web-new-b is Running but never became Ready (ContainersNotReady)');
  });

  it("a Machine whose readiness probe fails: the Machine, its PodMachine, the pod and the kubelet's latest Unhealthy Event of the probe", async () => {
    const { source, machine } = failingReadinessProbe();
    const finding = await why(source, 'Machine', machine);
    assert.equal(
      renderFinding(finding),
      [
        'Machine/db is blocked: Pod/db: container machine is not ready: its readiness probe fails (x14): Readiness probe failed: /var/run/postgresql:5432 - rejecting connections',
        '  path: Machine/db -> PodMachine/db -> Pod/db',
        '  Machine/db: condition InfrastructureReady=False PodNotReady: PodMachine db: pod db is running but not ready',
        '  Pod/db: container machine ready=false started=true restartCount=0',
        '  Pod/db: condition Ready=False ContainersNotReady: containers with unready status: [machine]',
        '  Pod/db: event Warning Unhealthy 10s ago (x14): (the same message)',
      ].join('\n'),
    );
  });

  it('a startup probe that has not passed: the container has not started, how it last ended', async () => {
    const { source, machine } = failingStartupProbe();
    const finding = await why(source, 'Machine', machine);
    assert.equal(
      finding.summary,
      'Pod/slow: container machine is not ready: its startup probe fails, so it has not started (x9): Startup probe failed: Get "http://10.0.0.7:8080/healthz": dial tcp 10.0.0.7:8080: connect: connection refused',
    );
    assert.ok(
      finding.evidence.includes(
        'Pod/slow: container machine ready=false started=false restartCount=1, last ended: Error, exit code 137',
      ),
      finding.evidence.join('\n'),
    );
  });

  it('a crash loop the liveness probe causes: the container state and the probe Event, not the BackOff one', async () => {
    const { source, machine } = failingLivenessProbe();
    const finding = await why(source, 'Machine', machine);
    assert.equal(
      finding.summary,
      'Pod/flaky: container machine is waiting: CrashLoopBackOff: back-off 1m20s restarting failed container (restarted 4 times); its liveness probe fails, so the kubelet restarts it (x12): Liveness probe failed: command timed out',
    );
    assert.deepEqual(finding.evidence.slice(-2), [
      'Pod/flaky: container machine state waiting CrashLoopBackOff',
      'Pod/flaky: event Warning Unhealthy 60s ago (x12): (the same message)',
    ]);
  });

  it("a refused pod: the PodMachine's PodRefused condition, which quotes the API server, and its Event", async () => {
    const { source, machine, refusal } = refusedPod();
    const finding = await why(source, 'Machine', machine);
    assert.deepEqual(finding.path, ['Machine/priv', 'PodMachine/priv']);
    assert.equal(
      finding.summary,
      `PodMachine/priv cannot create its pod: PodRefused: the API server refused pod priv: ${refusal}; retrying with backoff`,
    );
    assert.deepEqual(finding.evidence.slice(1), [
      `PodMachine/priv: condition Ready=False PodRefused: the API server refused pod priv: ${refusal}; retrying with backoff`,
      'PodMachine/priv: event Warning PodRefused 5s ago (x5): (the same message)',
    ]);
  });

  it('a rollout past its progress deadline: the Progressing condition joins the evidence', async () => {
    const { source, bd } = neverReadyRollout();
    const status = bd.status as { conditions: Array<Record<string, string>> };
    status.conditions[1] = {
      type: 'Progressing',
      status: 'False',
      reason: 'ProgressDeadlineExceeded',
      message: 'BasicReplicaSet "web-new" has timed out progressing.',
      lastTransitionTime: '2026-11-24T09:59:00Z',
    };
    const finding = await why(source, 'BasicDeployment', bd);
    assert.equal(
      finding.evidence[0],
      'BasicDeployment/web: condition Progressing=False ProgressDeadlineExceeded: BasicReplicaSet "web-new" has timed out progressing.',
    );
    assert.match(finding.summary, /its readiness probe fails/);
  });

  it("a crash-looping container: the container's waiting state", async () => {
    const { source, brs } = crashLooping();
    const finding = await why(source, 'BasicReplicaSet', brs);
    assert.equal(
      finding.summary,
      'Pod/api-x: container api is waiting: CrashLoopBackOff: back-off 2m40s restarting failed container (restarted 5 times)',
    );
  });

  it('creates refused by a quota: the set, its ReplicaFailure condition and the FailedCreate Event', async () => {
    const { source, bd } = quotaRefused();
    const finding = await why(source, 'BasicDeployment', bd);
    assert.deepEqual(finding.path, ['BasicDeployment/q', 'BasicReplicaSet/q-abc']);
    assert.match(
      finding.summary,
      /^BasicReplicaSet\/q-abc: pod creates are refused \(a ResourceQuota\): .*exceeded quota: pods/,
    );
    assert.match(finding.evidence.join('\n'), /condition ReplicaFailure=True FailedCreate/);
    assert.match(finding.evidence.join('\n'), /event Warning FailedCreate 10s ago \(x4\): Error creating/);
  });

  it('a deleted Machine waiting for a backup whose copy keeps failing: the VolumeBackup and the failed Job', async () => {
    const { source, machine } = failingBackup();
    const finding = await why(source, 'Machine', machine);
    assert.deepEqual(finding.path, ['Machine/doomed', 'VolumeBackup/doomed-1a2b3c4d']);
    assert.match(
      finding.summary,
      /^Machine\/doomed waits for its backup: VolumeBackup\/doomed-1a2b3c4d failed: BackupFailed: volume data: 2 of 2/,
    );
    const evidence = finding.evidence.join('\n');
    assert.match(evidence, /Machine\/doomed: condition VolumeBackup=False BackupFailed/);
    assert.match(evidence, /Job\/doomed-1a2b3c4d-data-2 condition Failed=True BackoffLimitExceeded/);
  });

  it('a Machine waiting for the backup finalizer: its InfrastructureReady condition', async () => {
    const { source, machine } = waitingForFinalizer();
    const finding = await why(source, 'Machine', machine);
    assert.deepEqual(finding.path, ['Machine/early']);
    assert.match(
      finding.summary,
      /^Machine\/early waits: WaitingForBackupFinalizer: backup policy is OnDelete/,
    );
  });

  it('a Machine whose provider object does not exist; an Event repeating the condition keeps only its time', async () => {
    const { source, machine } = missingProvider();
    const message = 'StatefulSetMachine db does not exist in namespace shop';
    source.event(machine.metadata?.uid ?? '', {
      type: 'Warning',
      reason: 'InfrastructureNotFound',
      message,
      time: '2026-11-24T09:59:00Z',
      count: 3,
    });
    const finding = await why(source, 'Machine', machine);
    assert.equal(finding.summary, `Machine/db waits: InfrastructureNotFound: ${message}`);
    assert.deepEqual(finding.evidence, [
      `Machine/db: condition InfrastructureReady=False InfrastructureNotFound: ${message}`,
      'Machine/db: event Warning InfrastructureNotFound 60s ago (x3): (the same message)',
    ]);
  });

  it('nothing blocks a Ready Machine; the exit codes are 0 when Ready, 1 when blocked', async () => {
    const lines: string[] = [];
    const output = { out: (t: string) => lines.push(t), err: (t: string) => lines.push(`ERR ${t}`) };
    const invocation = (args: string[]) => {
      const parsed = parseArgs(args);
      if (parsed.help) throw new Error('help');
      return parsed.invocation;
    };
    assert.equal(
      await execute(invocation(['why', 'machine/web']), readyMachine().source, NS, output, NOW),
      EXIT_READY,
    );
    assert.equal(lines.pop(), 'Machine/web: nothing blocks it: Ready');
    assert.equal(
      await execute(
        invocation(['why', 'machine/early', '-o', 'json']),
        waitingForFinalizer().source,
        NS,
        output,
        NOW,
      ),
      EXIT_BLOCKED,
    );
    const json = JSON.parse(lines.pop() ?? '') as { items: Array<{ blocked: boolean; path: string[] }> };
    assert.deepEqual(
      json.items.map((f) => [f.blocked, f.path]),
      [[true, ['Machine/early']]],
    );
  });

  it("a Machine on another provider: through the StatefulSet the provider owns to its pod and the kubelet's probe Event", async () => {
    const { source, machine } = statefulSetMachine();
    const finding = await why(source, 'Machine', machine);
    assert.deepEqual(finding.path, ['Machine/db', 'StatefulSetMachine/db', 'StatefulSet/db', 'Pod/db-0']);
    assert.equal(
      finding.summary,
      'Pod/db-0: container machine is not ready: its readiness probe fails (x7): Readiness probe failed: /var/run/postgresql:5432 - rejecting connections',
    );
    assert.ok(
      finding.evidence.includes('Pod/db-0: event Warning Unhealthy 10s ago (x7): (the same message)'),
    );
  });

  it("a StatefulSet whose pod admission refuses: kube-controller-manager's FailedCreate Event, quoted", async () => {
    const { source, machine } = statefulSetMachine({ refused: true });
    const finding = await why(source, 'Machine', machine);
    assert.deepEqual(finding.path, ['Machine/db', 'StatefulSetMachine/db', 'StatefulSet/db']);
    assert.equal(
      finding.summary,
      'StatefulSet/db cannot create its pod: create Pod db-0 in StatefulSet db failed error: pods "db-0" is forbidden: violates PodSecurity "restricted:latest": runAsNonRoot != true',
    );
    assert.deepEqual(finding.evidence.slice(-1), [
      'StatefulSet/db: event Warning FailedCreate 20s ago (x9): (the same message)',
    ]);
  });
});
