// What a user without the rights, or a cluster without the operator's CRDs, gets: one clear line
// and exit code 2. Also a Machine waiting for its backup finalizer (only the Machine controller
// runs here, so nobody adds it).
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { testKubeConfig } from '../../../e2e/support/cluster.ts';
import { MACHINE } from '../../../src/apis/index.ts';
import { registerMachineController } from '../../../src/controllers/machine/index.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';
import { startOperatorSuite } from '../../support/suite.ts';
import { type MachineSuite, machine, prepareCluster, stopMachineSuite } from '../machine/helpers.ts';
import { kubectlBasic, whyUntil } from './plugin.ts';

const RBAC_ROLE = {
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  kind: 'Role',
  plural: 'roles',
  namespaced: true,
};
const RBAC_BINDING = {
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  kind: 'RoleBinding',
  plural: 'rolebindings',
  namespaced: true,
};

describe('kubectl basic: access and a Machine waiting for its finalizer', () => {
  let suite: MachineSuite | undefined;
  let client: KubeClient;
  let ns: string;
  let dir: string;

  before(async () => {
    await prepareCluster(2);
    suite = await startOperatorSuite('kb-access', (m) => registerMachineController(m));
    ({ client, ns } = suite);
    dir = await mkdtemp(join(tmpdir(), 'kubectl-basic-'));
  });
  after(async () => {
    await stopMachineSuite(suite);
    await rm(dir, { recursive: true, force: true });
  });

  /** A kubeconfig of the test cluster's server and CA, authenticating as `user` (or nobody). */
  async function kubeconfigFile(file: string, server: string, user: Record<string, string>): Promise<string> {
    // client-node refuses http:// unless TLS verification is off (there is no TLS to verify).
    const plain = server.startsWith('http:');
    const kc = await testKubeConfig();
    const cluster = kc.getCurrentCluster();
    const path = join(dir, file);
    const doc = {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: 'c',
          cluster: {
            server,
            ...(plain ? { 'insecure-skip-tls-verify': true } : {}),
            ...(!plain && cluster?.caFile ? { 'certificate-authority': cluster.caFile } : {}),
            ...(!plain && cluster?.caData ? { 'certificate-authority-data': cluster.caData } : {}),
          },
        },
      ],
      users: [{ name: 'u', user }],
      contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'u', namespace: ns } }],
      'current-context': 'ctx',
    };
    await writeFile(path, JSON.stringify(doc));
    return path;
  }

  async function serviceAccountToken(name: string): Promise<string> {
    await client.create(CoreTypes.ServiceAccount, {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name, namespace: ns },
    });
    const answer = await client.request<{ status: { token: string } }>(
      'POST',
      `/api/v1/namespaces/${ns}/serviceaccounts/${name}/token`,
      {
        body: {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenRequest',
          spec: { expirationSeconds: 600 },
        },
      },
    );
    return answer.status.token;
  }

  it('a Machine waiting for the backup finalizer: WaitingForBackupFinalizer; the namespace comes from the context', async () => {
    await client.create(MACHINE, machine(ns, 'early'));
    const result = await whyUntil(['machine/early', '-n', ns], /WaitingForBackupFinalizer/);
    console.log(result.stdout);
    assert.equal(result.code, 1);
    assert.match(
      result.stdout,
      /^Machine\/early is blocked: Machine\/early waits: WaitingForBackupFinalizer: backup policy is OnDelete: waiting for the VolumeBackup controller to add the finalizer infra\.basicoperator\.dev\/volume-backup/,
    );
    const kc = await testKubeConfig();
    const user = kc.getCurrentUser();
    const own = await kubeconfigFile('admin.json', kc.getCurrentCluster()?.server ?? '', {
      ...(user?.certFile ? { 'client-certificate': user.certFile } : {}),
      ...(user?.keyFile ? { 'client-key': user.keyFile } : {}),
      ...(user?.certData ? { 'client-certificate-data': user.certData } : {}),
      ...(user?.keyData ? { 'client-key-data': user.keyData } : {}),
    });
    const fromContext = await kubectlBasic(['why', 'machine/early'], own);
    assert.equal(fromContext.code, 1, fromContext.stderr);
    assert.match(fromContext.stdout, /WaitingForBackupFinalizer/);
    const wrongContext = await kubectlBasic(['why', 'machine/early', '--context', 'nope'], own);
    assert.deepEqual(wrongContext, {
      code: 2,
      stdout: '',
      stderr: 'error: the kubeconfig has no context "nope"\n',
    });
  });

  it('403: says which resource in which namespace the kubeconfig may not read, in one line', async () => {
    const token = await serviceAccountToken('nobody');
    const file = await kubeconfigFile(
      'nobody.json',
      (await testKubeConfig()).getCurrentCluster()?.server ?? '',
      { token },
    );
    const denied = await kubectlBasic(['why', 'machine/early', '-n', ns], file);
    assert.deepEqual(denied, {
      code: 2,
      stdout: '',
      stderr: `error: forbidden (403): your kubeconfig may not get machines.infra.basicoperator.dev in namespace "${ns}"\n`,
    });
    const all = await kubectlBasic(['tree', 'machines', '-A'], file);
    assert.equal(
      all.stderr,
      'error: forbidden (403): your kubeconfig may not list machines.infra.basicoperator.dev in any namespace (-A)\n',
    );

    // Allowed to read Machines, not VolumeBackups: the walk stops at the first resource it may not read.
    await client.create(RBAC_ROLE, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'machines-only', namespace: ns },
      rules: [{ apiGroups: ['infra.basicoperator.dev'], resources: ['machines'], verbs: ['get', 'list'] }],
    });
    await client.create(RBAC_BINDING, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'nobody-machines', namespace: ns },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'machines-only' },
      subjects: [{ kind: 'ServiceAccount', name: 'nobody', namespace: ns }],
    });
    let partial = await kubectlBasic(['tree', 'machine/early'], file);
    for (let i = 0; i < 20 && /may not get machines/.test(partial.stderr); i++) {
      await new Promise((r) => setTimeout(r, 250)); // the authorizer's RBAC cache
      partial = await kubectlBasic(['tree', 'machine/early'], file);
    }
    assert.deepEqual(partial, {
      code: 2,
      stdout: '',
      stderr: `error: forbidden (403): your kubeconfig may not list volumebackups.infra.basicoperator.dev in namespace "${ns}"\n`,
    });
  });

  it("a cluster without the operator's CRDs: says so", async () => {
    // The real API server behind a proxy that asks it for the operator's groups under a group it
    // does not serve: its own 404 for a CRD that is not installed.
    const kc = await testKubeConfig();
    const upstream = new URL(kc.getCurrentCluster()?.server ?? '');
    const tls: RequestOptions = {};
    await kc.applyToHTTPSOptions(tls);
    const proxy: Server = createServer((req, res) => {
      const path = (req.url ?? '/').replace(
        /^\/apis\/(apps|infra)\.basicoperator\.dev\//,
        '/apis/not-installed.basicoperator.dev/',
      );
      const forward = httpsRequest(
        {
          ...tls,
          hostname: upstream.hostname,
          port: upstream.port,
          path,
          method: req.method,
          headers: { ...tls.headers, accept: req.headers.accept ?? 'application/json' },
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      forward.on('error', () => res.destroy());
      req.pipe(forward);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const port = (proxy.address() as AddressInfo).port;
      const file = await kubeconfigFile('no-crds.json', `http://127.0.0.1:${port}`, {});
      for (const target of ['machine/early', 'bd/web']) {
        const result = await kubectlBasic(['why', target], file);
        assert.equal(result.code, 2);
        assert.equal(result.stdout, '');
        assert.match(
          result.stderr,
          /^error: the API server does not serve (machines\.infra|basicdeployments\.apps)\.basicoperator\.dev: basic-operator's CRDs are not installed in this cluster/,
        );
        assert.equal(result.stderr.split('\n').length, 2, 'one line');
      }
    } finally {
      proxy.close();
      proxy.closeAllConnections();
    }
  });
});
