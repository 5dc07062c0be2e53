import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderTrees, treeToJson } from '../../../src/cli/kubectl-basic/render.ts';
import { summarize } from '../../../src/cli/kubectl-basic/summary.ts';
import { buildTree } from '../../../src/cli/kubectl-basic/tree.ts';
import { NOW, obj } from './recorded.ts';
import {
  failingBackup,
  missingProvider,
  neverReadyRollout,
  readyMachine,
  statefulSetMachine,
} from './scenes.ts';

describe('kubectl basic tree', () => {
  it('draws a BasicDeployment, its sets newest revision first, and their pods', async () => {
    const { source, bd } = neverReadyRollout();
    const text = renderTrees([await buildTree(source, 'BasicDeployment', bd)], NOW, false);
    assert.equal(
      text,
      [
        'NAME                       READY  STATUS     REASON              AGE  REVISION',
        'BasicDeployment/web        False  2/2 ready  RolloutInProgress   90s',
        '├─BasicReplicaSet/web-new  False  1/2 ready  PodsNotReady        90s  2',
        '│ ├─Pod/web-new-a          True   Running                        90s',
        '│ └─Pod/web-new-b          False  Running    ContainersNotReady  90s',
        '└─BasicReplicaSet/web-old  True   1/1 ready  PodsReady           90s  1',
        '  └─Pod/web-old-a          True   Running                        90s',
      ].join('\n'),
    );
  });

  it('draws a Machine: its provider object with claims and pod, and its VolumeBackup with claims and Jobs', async () => {
    const { source, machine } = failingBackup();
    const tree = await buildTree(source, 'Machine', machine);
    const names = (n: typeof tree): string[] => [`${n.kind}/${n.name}`, ...n.children.flatMap(names)];
    assert.deepEqual(names(tree), [
      'Machine/doomed',
      'PodMachine/doomed',
      'PersistentVolumeClaim/doomed-data',
      'VolumeBackup/doomed-1a2b3c4d',
      'PersistentVolumeClaim/doomed-1a2b3c4d-data',
      'Job/doomed-1a2b3c4d-data-1',
      'Job/doomed-1a2b3c4d-data-2',
    ]);
    const vb = tree.children[1];
    assert.equal(vb?.status, 'Failed');
    assert.equal(vb?.children[1]?.status, 'Failed');
    assert.equal(vb?.children[1]?.reason, 'BackoffLimitExceeded');
    assert.match(tree.status, /Stopped, deleting/);
  });

  it('shows a provider object the Machine names and the server does not have', async () => {
    const { source, machine } = missingProvider();
    const tree = await buildTree(source, 'Machine', machine);
    assert.equal(tree.children.length, 1);
    assert.deepEqual(
      { kind: tree.children[0]?.kind, name: tree.children[0]?.name, missing: tree.children[0]?.missing },
      { kind: 'StatefulSetMachine', name: 'db', missing: true },
    );
  });

  it("draws any provider's claims, the StatefulSets it owns with their pods, and nothing it does not own", async () => {
    const { source, machine } = statefulSetMachine();
    const text = renderTrees([await buildTree(source, 'Machine', machine)], NOW, false);
    assert.equal(
      text,
      [
        'NAME                               READY  STATUS        REASON              AGE  REVISION',
        'Machine/db                         False  Provisioning  PodNotReady         90s',
        '└─StatefulSetMachine/db            False  Provisioning  PodNotReady         90s',
        '  ├─PersistentVolumeClaim/db-data  True   Bound                             90s',
        '  └─StatefulSet/db                 False  0/1 ready                         90s',
        '    └─Pod/db-0                     False  Running       ContainersNotReady  90s',
      ].join('\n'),
    );
  });

  it('gives a stable JSON shape', async () => {
    const { source, machine } = readyMachine();
    const json = treeToJson(await buildTree(source, 'Machine', machine));
    assert.deepEqual(Object.keys(json), [
      'kind',
      'name',
      'namespace',
      'ready',
      'status',
      'reason',
      'message',
      'creationTimestamp',
      'revision',
      'missing',
      'children',
    ]);
    assert.equal(json.creationTimestamp, '2026-11-24T09:58:30Z');
    assert.equal(json.revision, null);
    assert.deepEqual(
      json.children[0]?.children.map((c) => [c.kind, c.ready]),
      [
        ['PersistentVolumeClaim', true],
        ['Pod', true],
      ],
    );
  });
});

describe('a StatefulSet, summarized', () => {
  const sts = (status: Record<string, number>, generation = 2) => ({
    ...obj('StatefulSet', 'db', { spec: { replicas: 2 }, status }),
    metadata: { name: 'db', namespace: 'shop', generation },
  });
  it('is ready when every desired pod of its current revision is ready, as `kubectl rollout status` has it', () => {
    assert.deepEqual(
      [
        sts({ observedGeneration: 2, readyReplicas: 2, updatedReplicas: 2 }),
        sts({ observedGeneration: 2, readyReplicas: 2, updatedReplicas: 1 }),
        sts({ observedGeneration: 1, readyReplicas: 2, updatedReplicas: 2 }),
        sts({ observedGeneration: 2, readyReplicas: 1, updatedReplicas: 2 }),
        sts({ observedGeneration: 2, readyReplicas: 2 }),
      ].map((s) => summarize('StatefulSet', s).ready),
      [true, false, false, false, true],
    );
    assert.equal(
      summarize('StatefulSet', sts({ observedGeneration: 2, readyReplicas: 1 })).status,
      '1/2 ready',
    );
  });
});
