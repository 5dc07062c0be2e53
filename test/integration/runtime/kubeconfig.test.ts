import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { testCluster, testKubeConfig } from '../../../e2e/support/cluster.ts';
import type { ClusterAccess } from '../../../src/runtime/client/cluster-access.ts';
import { ClusterConnection } from '../../../src/runtime/client/cluster-connection.ts';
import { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { loadKubeConfig } from '../../../src/runtime/client/kubeconfig.ts';
import { parseConfig } from '../../../src/runtime/manager/config.ts';
import { Manager } from '../../../src/runtime/manager/manager.ts';
import { tempDir } from '../../support/temp-dir.ts';

/** Who the API server says the client is. */
async function whoAmI(access: ClusterAccess): Promise<string> {
  const review = await new KubeClient(access, { userAgent: 'basic-operator-tests' }).request<{
    status: { userInfo: { username: string } };
  }>('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
  });
  return review.status.userInfo.username;
}

describe("the operator's own kubeconfig loader against the test cluster", () => {
  const dir = tempDir('bo-kubeconfig-it-');
  let kubeconfig: string;
  let server: URL;
  let caPem: Buffer;
  let token: string;
  const serviceAccount = 'system:serviceaccount:default:default';

  before(async () => {
    kubeconfig = (await testCluster()).kubeconfig;
    const admin = await testKubeConfig();
    const cluster = admin.getCurrentCluster();
    assert.ok(cluster);
    server = new URL(cluster.server);
    caPem = cluster.caFile ? readFileSync(cluster.caFile) : Buffer.from(cluster.caData ?? '', 'base64');
    const request = await new KubeClient(admin).request<{ status: { token: string } }>(
      'POST',
      '/api/v1/namespaces/default/serviceaccounts/default/token',
      {
        body: {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenRequest',
          spec: { expirationSeconds: 600 },
        },
      },
    );
    token = request.status.token;
  });

  it("reads the test cluster's kubeconfig itself and is the same user as with client-node", async () => {
    const access = await loadKubeConfig(kubeconfig);
    assert.ok(access instanceof ClusterConnection);
    assert.equal(await whoAmI(access), await whoAmI(await testKubeConfig()));
  });

  it('a kubeconfig with a token, as the e2e suite gives the operator', async () => {
    const file = join(dir, 'token-kubeconfig');
    writeFileSync(
      file,
      JSON.stringify({
        clusters: [
          {
            name: 'c',
            cluster: { server: server.href, 'certificate-authority-data': caPem.toString('base64') },
          },
        ],
        users: [{ name: 'sa', user: { token } }],
        contexts: [{ name: 'x', context: { cluster: 'c', user: 'sa' } }],
        'current-context': 'x',
      }),
    );
    assert.equal(
      await whoAmI(await loadKubeConfig(undefined, { env: { KUBECONFIG: file } })),
      serviceAccount,
    );
  });

  it('the in-cluster config: service host and port, the service account token and CA', async () => {
    const sa = join(dir, 'serviceaccount');
    mkdirSync(sa);
    writeFileSync(join(sa, 'token'), token);
    writeFileSync(join(sa, 'ca.crt'), caPem);
    const env = { KUBERNETES_SERVICE_HOST: server.hostname, KUBERNETES_SERVICE_PORT: server.port };
    const access = await loadKubeConfig(undefined, { env, serviceAccountDir: sa });
    assert.equal(await whoAmI(access), serviceAccount);
  });

  it('a Manager built on it reaches the server', async () => {
    const config = parseConfig(['--kubeconfig', kubeconfig, '--log-level', 'error'], {});
    if (config === 'help') throw new Error('unexpected help');
    const manager = new Manager(config, await loadKubeConfig(config.kubeconfig));
    assert.match(await manager.checkConnection(), /^v1\./);
  });
});
