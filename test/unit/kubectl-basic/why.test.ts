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
  missingProvider,
  neverReadyRollout,
  quotaRefused,
  readyMachine,
  waitingForFinalizer,
} from './scenes.ts';

async function why(source: RecordedSource, kind: string, obj: Unstructured) {
  return new WhyWalk(source, NOW).explain(await buildTree(source, kind, obj));
}

describe('kubectl basic why', () => {
  it('a rollout held by a pod that never becomes Ready: the pod, its Ready condition and the probe Event', async () => {
    const { source, bd } = neverReadyRollout();
    const finding = await why(source, 'BasicDeployment', bd);
    assert.equal(finding.blocked, true);
    assert.deepEqual(finding.path, ['BasicDeployment/web', 'BasicReplicaSet/web-new', 'Pod/web-new-b']);
    assert.equal(finding.summary, 'Pod/web-new-b is Running but never became Ready (ContainersNotReady)');
    assert.equal(
      renderFinding(finding),
      [
        'BasicDeployment/web is blocked: Pod/web-new-b is Running but never became Ready (ContainersNotReady)',
        '  path: BasicDeployment/web -> BasicReplicaSet/web-new -> Pod/web-new-b',
        '  Pod/web-new-b: condition Ready=False ContainersNotReady: containers with unready status: [app]',
        '  Pod/web-new-b: event Warning Unhealthy 30s ago (x12): Readiness probe failed: connection refused',
      ].join('\n'),
    );
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
    assert.match(finding.summary, /never became Ready/);
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
});
