import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { testClient, testKubeConfig } from '../../../e2e/support/cluster.ts';
import { httpsGet } from '../../../e2e/support/https.ts';
import { createNamespace, deleteNamespace } from '../../../e2e/support/namespace.ts';
import { waitFor } from '../../../e2e/support/wait.ts';
import { operatorManagerOptions } from '../../../src/controllers/index.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { parseConfig } from '../../../src/runtime/manager/config.ts';
import { Manager } from '../../../src/runtime/manager/manager.ts';
import { issueServingCertificate, writeSecretVolume } from '../../support/certificates.ts';
import { startTestManager } from '../../support/manager.ts';

const RBAC = '/apis/rbac.authorization.k8s.io/v1';

/** A ServiceAccount's token from the TokenRequest API, valid ten minutes. */
async function serviceAccountToken(client: KubeClient, namespace: string, name: string): Promise<string> {
  await client.request('POST', `/api/v1/namespaces/${namespace}/serviceaccounts`, {
    body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } },
  });
  const request = await client.request<{ status: { token: string } }>(
    'POST',
    `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
    {
      body: {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: { expirationSeconds: 600 },
      },
    },
  );
  return request.status.token;
}

/** The test cluster, as the holder of `token`. */
async function kubeConfigAs(token: string): Promise<KubeConfig> {
  const cluster = (await testKubeConfig()).getCurrentCluster();
  if (!cluster) throw new Error('the test kubeconfig has no current cluster');
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [cluster],
    users: [{ name: 'sa', token }],
    contexts: [{ name: 'sa', cluster: cluster.name, user: 'sa' }],
    currentContext: 'sa',
  });
  return kc;
}

/** A manager with secure metrics running as the holder of `token`, with no controllers. */
async function startManagerAs(namespace: string, token: string): Promise<Manager> {
  const config = parseConfig(
    [
      '--namespaces',
      namespace,
      '--metrics-bind-address',
      '127.0.0.1:0',
      '--health-probe-bind-address',
      '0',
      '--log-level',
      process.env.TEST_LOG_LEVEL ?? 'error',
    ],
    {},
  );
  if (config === 'help') throw new Error('unexpected help');
  const manager = new Manager(config, await kubeConfigAs(token), operatorManagerOptions);
  await manager.start();
  return manager;
}

/** A secure metrics endpoint (the default), watching nothing in particular. */
function startSecureManager(namespace: string, flags: string[] = []): Promise<Manager> {
  return startTestManager([namespace], () => undefined, ['--metrics-secure=true', ...flags]);
}

function metricsPort(manager: Manager): number {
  const port = manager.ports.metrics;
  if (port === undefined) throw new Error('the manager serves no metrics');
  return port;
}

describe('metrics behind authentication, against the API server', () => {
  let client: KubeClient;
  let ns: string;
  let reader: string;
  let allowedToken: string;
  let deniedToken: string;
  let manager: Manager;
  let certDir: string;
  const managers: Manager[] = [];

  before(async () => {
    client = await testClient();
    ns = await createNamespace(client, 'metrics-auth');
    reader = `${ns}-metrics-reader`;
    // The chart's metrics-reader ClusterRole, under a name of this test's own.
    await client.request('POST', `${RBAC}/clusterroles`, {
      body: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: reader },
        rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }],
      },
    });
    await client.request('POST', `${RBAC}/clusterrolebindings`, {
      body: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: reader },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: reader },
        subjects: [{ kind: 'ServiceAccount', name: 'prometheus', namespace: ns }],
      },
    });
    allowedToken = await serviceAccountToken(client, ns, 'prometheus');
    deniedToken = await serviceAccountToken(client, ns, 'stranger');
    manager = await startSecureManager(ns);
    managers.push(manager);
    certDir = mkdtempSync(join(tmpdir(), 'metrics-cert-'));
  });

  after(async () => {
    await Promise.all(managers.map((m) => m.stop()));
    await client.request('DELETE', `${RBAC}/clusterrolebindings/${reader}`).catch(() => undefined);
    await client.request('DELETE', `${RBAC}/clusterroles/${reader}`).catch(() => undefined);
    await deleteNamespace(client, ns);
    rmSync(certDir, { recursive: true, force: true });
  });

  it('answers 401 to a scrape without a token, or with a token the API server does not know', async () => {
    const none = await httpsGet(metricsPort(manager), '/metrics');
    assert.equal(none.status, 401);
    const forged = await httpsGet(metricsPort(manager), '/metrics', { token: 'not-a-token' });
    assert.equal(forged.status, 401);
    assert.doesNotMatch(none.body + forged.body, /# HELP/);
  });

  it('answers 403 to a ServiceAccount without the metrics-reader role', async () => {
    const answer = await httpsGet(metricsPort(manager), '/metrics', { token: deniedToken });
    assert.equal(answer.status, 403);
    assert.match(answer.body, new RegExp(`system:serviceaccount:${ns}:stranger`));
  });

  it('serves the metrics to a ServiceAccount bound to the metrics-reader role', async () => {
    const answer = await httpsGet(metricsPort(manager), '/metrics', { token: allowedToken });
    assert.equal(answer.status, 200);
    assert.match(answer.body, /^# HELP /m);
    assert.match(answer.body, /rest_client_requests_total/);
  });

  it('answers 429 to a flood of random tokens after a bounded number of TokenReviews, and still serves a known scraper', async () => {
    const port = metricsPort(manager);
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) {
      const answer = await httpsGet(port, '/metrics', { token: `random-${i}` });
      statuses.push(answer.status);
      if (answer.status === 429) assert.match(answer.body, /^Too Many Requests: .* retry in \d+s$/m);
    }
    // The default budget: 10 at once, one a second; 30 requests take far less than 20 seconds.
    assert.ok(statuses.includes(429), `statuses: ${statuses.join(' ')}`);
    assert.ok(statuses.every((status) => status === 401 || status === 429));
    assert.equal((await httpsGet(port, '/metrics', { token: allowedToken })).status, 200);
  });

  it("needs no more than the chart's two rules (create TokenReviews and SubjectAccessReviews), and answers 500 without them", {
    timeout: 60_000,
  }, async () => {
    const rules = `${ns}-metrics-auth`;
    await client.request('POST', `${RBAC}/clusterroles`, {
      body: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: rules },
        rules: [
          { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
          { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
        ],
      },
    });
    try {
      await client.request('POST', `${RBAC}/clusterrolebindings`, {
        body: {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'ClusterRoleBinding',
          metadata: { name: rules },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: rules },
          subjects: [{ kind: 'ServiceAccount', name: 'operator', namespace: ns }],
        },
      });
      const operator = await startManagerAs(ns, await serviceAccountToken(client, ns, 'operator'));
      managers.push(operator);
      const unprivileged = await startManagerAs(ns, await serviceAccountToken(client, ns, 'bare-operator'));
      managers.push(unprivileged);
      // RBAC bindings reach the authorizer's cache shortly after they are written.
      await waitFor(
        'the operator with the two rules to serve a metrics reader',
        async () =>
          (await httpsGet(metricsPort(operator), '/metrics', { token: allowedToken })).status === 200,
        { timeoutMs: 20_000 },
      );
      assert.equal((await httpsGet(metricsPort(operator), '/metrics', { token: deniedToken })).status, 403);
      const failed = await httpsGet(metricsPort(unprivileged), '/metrics', { token: allowedToken });
      assert.equal(failed.status, 500);
      assert.match(failed.body, /could not review the request: .*tokenreviews/);
    } finally {
      await client.request('DELETE', `${RBAC}/clusterrolebindings/${rules}`).catch(() => undefined);
      await client.request('DELETE', `${RBAC}/clusterroles/${rules}`).catch(() => undefined);
    }
  });

  it('generates a self-signed certificate when none is given', async () => {
    const { peer } = await httpsGet(metricsPort(manager), '/metrics');
    assert.equal(peer.subject.CN, 'basic-operator-metrics');
    assert.deepEqual(peer.issuer, peer.subject);
    assert.match(peer.subjectaltname ?? '', /DNS:localhost/);
    assert.match(peer.subjectaltname ?? '', /IP Address:127\.0\.0\.1/);
  });

  it("serves a certificate from a directory in cert-manager's Secret shape, and the new one after the Secret changes", {
    timeout: 60_000,
  }, async () => {
    const first = issueServingCertificate('metrics-first.test');
    writeSecretVolume(certDir, first, 1);
    const withCert = await startSecureManager(ns, ['--metrics-cert-path', certDir]);
    managers.push(withCert);
    const port = metricsPort(withCert);
    // Verified against the Secret's ca.crt, as a ServiceMonitor with tlsConfig.ca does.
    const answer = await httpsGet(port, '/metrics', {
      token: allowedToken,
      ca: first['ca.crt'],
      servername: 'localhost',
    });
    assert.equal(answer.status, 200);
    assert.equal(answer.peer.subject.CN, 'metrics-first.test');

    const second = issueServingCertificate('metrics-second.test');
    writeSecretVolume(certDir, second, 2);
    await waitFor(
      'the renewed certificate to be served',
      async () =>
        (await httpsGet(port, '/metrics', { ca: second['ca.crt'], servername: 'localhost' })).peer.subject
          .CN === 'metrics-second.test',
      { timeoutMs: 10_000 },
    );
  });
});
