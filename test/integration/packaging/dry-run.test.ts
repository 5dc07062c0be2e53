import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { V1Deployment, V1Pod } from '@kubernetes/client-node';
import { type RunResult, run } from '../../../e2e/providers/exec.ts';
import { IMAGE as KIND_IMAGE } from '../../../e2e/providers/kind/index.ts';
import type { ClusterInfo } from '../../../e2e/providers/provider.ts';
import { testClient, testCluster } from '../../../e2e/support/cluster.ts';
import { createNamespace, deleteNamespace, labelNamespace } from '../../../e2e/support/namespace.ts';
import { waitFor } from '../../../e2e/support/wait.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';
import {
  CHART_DIR,
  CONFIG_DIR,
  find,
  type Manifest,
  parseManifests,
} from '../../unit/packaging/manifests.ts';
import { templateArgs } from './helm.ts';

/**
 * The API server judges the install manifests: `helm template` output and config/default must pass
 * `kubectl apply --dry-run=server` (schemas, RBAC escalation checks, admission), and the operator's
 * pods must be admitted in a namespace that enforces Pod Security "restricted".
 */

const POD_SECURITY_VIOLATION = /would violate PodSecurity/;

describe('install manifests against the API server', () => {
  let client: KubeClient;
  let cluster: ClusterInfo;
  let ns: string;
  const tmp = mkdtempSync(join(tmpdir(), 'basic-operator-packaging-'));

  const kubectl = (args: string[], input?: string): Promise<RunResult> =>
    run(cluster.kubectl, ['--kubeconfig', cluster.kubeconfig, ...args], { input, timeoutMs: 120_000 });
  const helm = (args: string[]): Promise<RunResult> =>
    run(cluster.helm, ['--kubeconfig', cluster.kubeconfig, ...args], { timeoutMs: 180_000 });
  const ok = (result: RunResult, what: string): string => {
    assert.equal(result.code, 0, `${what} failed:\n${result.stderr}${result.stdout}`);
    return result.stdout;
  };

  before(async () => {
    client = await testClient();
    cluster = await testCluster();
    ns = await createNamespace(client, 'packaging');
    // The namespace enforces what config/default's namespace enforces, and warns about workloads too.
    await labelNamespace(client, ns, {
      'pod-security.kubernetes.io/enforce': 'restricted',
      'pod-security.kubernetes.io/warn': 'restricted',
    });
    // helm test creates the test Pod's ServiceAccount (a hook of lower weight) before the Pod; a dry
    // run persists nothing, so the ServiceAccount admission plugin needs it to exist already.
    await client.request('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, {
      body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'basic-operator-test-metrics' } },
    });
  });
  after(async () => {
    rmSync(tmp, { recursive: true, force: true });
    await deleteNamespace(client, ns);
  });

  async function renderInto(namespace: string, extra: string[] = []): Promise<string> {
    return ok(await run(cluster.helm, templateArgs({ namespace, extraArgs: extra })), 'helm template');
  }

  it('helm template output (CRDs included) passes kubectl apply --dry-run=server', async () => {
    const rendered = await renderInto(ns, ['--include-crds']);
    const result = await kubectl(['apply', '--dry-run=server', '-f', '-'], rendered);
    const out = ok(result, 'kubectl apply --dry-run=server');
    assert.doesNotMatch(result.stderr, POD_SECURITY_VIOLATION);
    const applied = out.split('\n').filter((line) => line.endsWith('(server dry run)'));
    assert.equal(applied.length, parseManifests(rendered).length, out);
  });

  it('the operator pod and the helm test pod are admitted under Pod Security restricted', async () => {
    const manifests = parseManifests(await renderInto(ns));
    const deployment = find<Manifest & V1Deployment>(manifests, 'Deployment', 'basic-operator');
    const operatorPod: V1Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'operator-pod-dry-run',
        namespace: ns,
        labels: deployment.spec?.template.metadata?.labels,
      },
      // The ServiceAccount admission plugin would want the chart's ServiceAccount to exist.
      spec: deployment.spec?.template.spec && {
        ...deployment.spec.template.spec,
        serviceAccountName: undefined,
      },
    };
    const testPod = find(manifests, 'Pod', 'basic-operator-test-metrics');
    for (const pod of [operatorPod, testPod]) {
      const result = await kubectl(['create', '--dry-run=server', '-f', '-'], JSON.stringify(pod));
      ok(result, `admitting pod ${pod.metadata?.name}`);
    }
  });

  it('config/default passes kubectl apply -k --dry-run=server', async () => {
    // An overlay moves the install into this test's namespace (the cluster is shared: nothing may
    // touch basic-operator-system); kustomize renames the Namespace and the binding subjects with it.
    const overlay = join(tmp, 'overlay');
    const base = relative(overlay, join(CONFIG_DIR, 'default'));
    mkdirSync(overlay, { recursive: true });
    writeFileSync(
      join(overlay, 'kustomization.yaml'),
      [
        'apiVersion: kustomize.config.k8s.io/v1beta1',
        'kind: Kustomization',
        `namespace: ${ns}`,
        'resources:',
        `  - ${base}`,
        '',
      ].join('\n'),
    );
    const result = await kubectl(['apply', '-k', overlay, '--dry-run=server']);
    const out = ok(result, 'kubectl apply -k --dry-run=server');
    assert.doesNotMatch(result.stderr, POD_SECURITY_VIOLATION);
    assert.match(out, /deployment\.apps\/basic-operator created \(server dry run\)/);
    assert.match(
      out,
      /clusterrole\.rbac\.authorization\.k8s\.io\/basic-operator-manager created \(server dry run\)/,
    );
    for (const policy of ['machine-backups', 'backup-claims']) {
      for (const kind of ['validatingadmissionpolicy', 'validatingadmissionpolicybinding']) {
        assert.match(
          out,
          new RegExp(`${kind}\\.admissionregistration\\.k8s\\.io/basic-operator-${policy} created`),
        );
      }
    }
  });

  it('config/default installs into basic-operator-system', async () => {
    const manifests = parseManifests(
      ok(await kubectl(['kustomize', join(CONFIG_DIR, 'default')]), 'kustomize'),
    );
    const namespaced = manifests.filter((m) => m.metadata.namespace !== undefined);
    assert.ok(namespaced.length >= 5, 'expected the namespaced objects of the operator');
    for (const m of namespaced) assert.equal(m.metadata.namespace, 'basic-operator-system', m.kind);
    const namespace = find(manifests, 'Namespace', 'basic-operator-system');
    assert.equal(namespace.metadata.labels?.['pod-security.kubernetes.io/enforce'], 'restricted');
  });

  it('helm install --wait brings the Deployment up, and uninstall keeps the CRDs', async () => {
    const release = ns;
    const image =
      cluster.provider === 'kind'
        ? [
            '--set',
            `image.repository=${KIND_IMAGE.split(':')[0]}`,
            '--set',
            `image.tag=${KIND_IMAGE.split(':')[1]}`,
          ]
        : [];
    try {
      ok(
        await helm([
          'install',
          release,
          CHART_DIR,
          '--namespace',
          ns,
          '--skip-crds',
          // Only this namespace: on kind the operator really runs, next to other tests' managers.
          '--set',
          `watchNamespaces={${ns}}`,
          '--set',
          'image.pullPolicy=IfNotPresent',
          ...image,
          '--wait',
          '--timeout',
          '150s',
        ]),
        'helm install',
      );
      const fullname = `${release}-basic-operator`;
      // helm --wait reads the ReplicaSet; the Deployment's own count follows a moment later.
      await waitFor('the Deployment to count 2 ready replicas', async () => {
        const d = await client.get<V1Deployment>(CoreTypes.Deployment, ns, fullname);
        return d.status?.observedGeneration === d.metadata?.generation && d.status?.readyReplicas === 2;
      });
      ok(await kubectl(['get', 'clusterrole', `${fullname}-manager`]), 'get ClusterRole');
      ok(await kubectl(['-n', ns, 'get', 'rolebinding', `${fullname}-manager`]), 'get RoleBinding');
    } finally {
      ok(
        await helm(['uninstall', release, '--namespace', ns, '--wait', '--timeout', '120s']),
        'helm uninstall',
      );
    }
    const clusterRole = await kubectl(['get', 'clusterrole', `${release}-basic-operator-manager`]);
    assert.notEqual(clusterRole.code, 0, 'the ClusterRole outlived the release');
    ok(await kubectl(['get', 'crd', 'basicdeployments.apps.basicoperator.dev']), 'the CRD is still there');
  });
});
