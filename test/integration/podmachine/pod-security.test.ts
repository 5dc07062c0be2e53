// A PodMachine in a namespace that enforces the Pod Security `restricted` profile: its pod has no
// securityContext of its own, so kube-apiserver's PodSecurity admission refuses it. That is a
// transient failure (Ready=False PodRefused, no failureReason), retried with the work queue's
// bounded backoff, so the PodMachine recovers once the namespace allows the pod.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isViolation, POD_MACHINE, readInfrastructure } from '../../../src/apis/index.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { labelNamespace } from '../../support/namespace.ts';
import { type OperatorSuite, stopOperatorSuite } from '../../support/suite.ts';
import {
  condition,
  isReady,
  podMachine,
  pods,
  startPodMachineSuite,
  waitForEvent,
  waitForPodMachine,
} from './helpers.ts';

describe('PodMachine under Pod Security restricted', () => {
  let suite: OperatorSuite | undefined;
  let client: KubeClient;
  let ns: string;

  before(async () => {
    suite = await startPodMachineSuite('podmachine-psa', 2);
    ({ client, ns } = suite);
    await labelNamespace(client, ns, {
      'pod-security.kubernetes.io/enforce': 'restricted',
      'pod-security.kubernetes.io/enforce-version': 'latest',
    });
  });
  after(() => stopOperatorSuite(suite));

  it('a refused pod is transient: PodRefused with the admission message, no failureReason, a Warning', async () => {
    await client.create(
      POD_MACHINE,
      podMachine(ns, 'locked', { volumes: [{ name: 'data', size: '1Gi', mountPath: '/data' }] }),
    );
    const pm = await waitForPodMachine(
      client,
      ns,
      'locked',
      'PodRefused, its claim Bound',
      (p) => condition(p, 'Ready')?.reason === 'PodRefused' && p.status?.volumes?.[0]?.phase === 'Bound',
    );
    assert.match(
      condition(pm, 'Ready')?.message ?? '',
      /refused pod locked: .*violates PodSecurity "restricted:latest".*retrying with backoff/,
    );
    assert.equal(pm.status?.ready, false);
    assert.notEqual(pm.status?.phase, 'Failed');
    assert.equal(pm.status?.failureReason, undefined);
    assert.equal(pm.status?.failureMessage, undefined);
    const view = readInfrastructure({ metadata: pm.metadata, status: pm.status });
    assert.ok(!isViolation(view));
    assert.equal(view.failure, undefined, 'the Machine waits: not terminal');
    assert.deepEqual(pm.status?.volumes, [{ name: 'data', claimName: 'locked-data', phase: 'Bound' }]);
    assert.equal((await pods(client, ns)).length, 0);
    const event = await waitForEvent(client, ns, 'locked', 'PodRefused');
    assert.equal(event.type, 'Warning');
  });

  it('gets Ready by itself once the namespace allows the pod (the retry with backoff)', async () => {
    const started = Date.now();
    await labelNamespace(client, ns, { 'pod-security.kubernetes.io/enforce': 'privileged' });
    const pm = await waitForPodMachine(client, ns, 'locked', 'Ready', isReady, 60_000);
    assert.equal(pm.status?.phase, 'Running');
    console.log(`  Ready ${Date.now() - started} ms after the namespace allowed the pod`);
  });
});
