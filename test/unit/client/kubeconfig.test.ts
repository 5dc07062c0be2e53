import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { RequestOptions } from 'node:https';
import type { AddressInfo } from 'node:net';
import { delimiter, join } from 'node:path';
import { describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { dump } from 'js-yaml';
import type { ClusterAccess } from '../../../src/runtime/client/cluster-access.ts';
import { ClusterConnection } from '../../../src/runtime/client/cluster-connection.ts';
import { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { loadKubeConfig } from '../../../src/runtime/client/kubeconfig.ts';
import { tempDir } from '../../support/temp-dir.ts';

const base64 = (text: string) => Buffer.from(text).toString('base64');

const root = tempDir('bo-kubeconfig-');

function caseDir(): string {
  return mkdtempSync(join(root, 'case-'));
}

interface Entry {
  cluster?: Record<string, unknown>;
  user?: Record<string, unknown> | null;
}

/** Writes a kubeconfig with one context `ctx` of cluster `c` and user `u`; returns its path. */
function writeKubeConfig(dir: string, entry: Entry, name = 'config'): string {
  const file = join(dir, name);
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      { name: 'other', cluster: { server: 'https://other:6443' } },
      { name: 'c', cluster: { server: 'https://kube.example:6443/', ...entry.cluster } },
    ],
    users: entry.user === null ? [] : [{ name: 'u', user: entry.user ?? {} }],
    contexts: [{ name: 'ctx', context: { cluster: 'c', ...(entry.user === null ? {} : { user: 'u' }) } }],
    'current-context': 'ctx',
  };
  writeFileSync(file, dump(doc));
  return file;
}

/** What a ClusterAccess hands a request: the fields KubeClient reads. */
async function applied(access: ClusterAccess) {
  const opts: RequestOptions = {};
  await access.applyToHTTPSOptions(opts);
  return {
    server: access.getCurrentCluster()?.server,
    ca: opts.ca?.toString(),
    cert: opts.cert?.toString(),
    key: opts.key?.toString(),
    rejectUnauthorized: opts.rejectUnauthorized,
    servername: opts.servername,
    headers: opts.headers,
    auth: opts.auth,
  };
}

/** Our loader reads `file` without client-node, and hands requests what client-node would. */
async function readLikeClientNode(file: string) {
  const ours = await loadKubeConfig(file, { env: {} });
  assert.ok(ours instanceof ClusterConnection, 'read without @kubernetes/client-node');
  const theirs = new KubeConfig();
  theirs.loadFromFile(file);
  const result = await applied(ours);
  assert.deepEqual(result, await applied(theirs));
  return result;
}

describe('loadKubeConfig: a kubeconfig file', () => {
  const dir = caseDir();

  it('a token, the CA as data: what client-node hands over', async () => {
    const file = writeKubeConfig(dir, {
      cluster: { 'certificate-authority-data': base64('CA') },
      user: { token: 'secret' },
    });
    assert.deepEqual(await readLikeClientNode(file), {
      server: 'https://kube.example:6443',
      ca: 'CA',
      cert: undefined,
      key: undefined,
      rejectUnauthorized: undefined,
      servername: undefined,
      headers: { Authorization: 'Bearer secret' },
      auth: undefined,
    });
  });

  it('client certificate and key as data', async () => {
    const file = writeKubeConfig(dir, {
      user: { 'client-certificate-data': base64('CERT'), 'client-key-data': base64('KEY') },
    });
    const result = await readLikeClientNode(file);
    assert.equal(result.cert, 'CERT');
    assert.equal(result.key, 'KEY');
  });

  it('CA, client certificate and key as files, relative ones relative to the kubeconfig', async () => {
    const sub = join(dir, 'files');
    mkdirSync(join(sub, 'pki'), { recursive: true });
    writeFileSync(join(sub, 'pki', 'ca.crt'), 'CA FILE');
    writeFileSync(join(sub, 'pki', 'admin.crt'), 'CERT FILE');
    writeFileSync(join(dir, 'admin.key'), 'KEY FILE');
    const file = writeKubeConfig(sub, {
      cluster: { 'certificate-authority': 'pki/ca.crt', 'certificate-authority-data': base64('ignored') },
      user: { 'client-certificate': 'pki/admin.crt', 'client-key': join(dir, 'admin.key') },
    });
    const result = await readLikeClientNode(file);
    assert.deepEqual([result.ca, result.cert, result.key], ['CA FILE', 'CERT FILE', 'KEY FILE']);
    // Read again at each use: a certificate renewed on disk is picked up.
    writeFileSync(join(sub, 'pki', 'admin.crt'), 'RENEWED');
    assert.equal((await readLikeClientNode(file)).cert, 'RENEWED');
  });

  it('insecure-skip-tls-verify and tls-server-name', async () => {
    const file = writeKubeConfig(dir, {
      cluster: { 'insecure-skip-tls-verify': true, 'tls-server-name': 'kubernetes.default' },
      user: { token: 't' },
    });
    const result = await readLikeClientNode(file);
    assert.equal(result.rejectUnauthorized, false);
    assert.equal(result.servername, 'kubernetes.default');
  });

  it('basic auth as `auth` (KubeClient turns it into a header), impersonation as a header', async () => {
    const file = writeKubeConfig(dir, { user: { username: 'admin', password: 'pw', as: 'jane' } });
    const result = await readLikeClientNode(file);
    assert.equal(result.auth, 'admin:pw');
    assert.deepEqual(result.headers, { 'Impersonate-User': 'jane' });
  });

  it('a context without a user: anonymous, with the cluster TLS settings still applied', async () => {
    const file = writeKubeConfig(dir, {
      user: null,
      cluster: { 'certificate-authority-data': base64('CA') },
    });
    const access = await loadKubeConfig(file, { env: {} });
    assert.ok(access instanceof ClusterConnection);
    const result = await applied(access);
    assert.equal(result.ca, 'CA');
    assert.deepEqual(result.headers, {});
  });

  it("kubectl's tokenFile, relative to the kubeconfig and read at every use; token wins over it", async () => {
    writeFileSync(join(dir, 'token'), 'first\n');
    const file = writeKubeConfig(dir, { user: { tokenFile: 'token' } });
    const access = await loadKubeConfig(file, { env: {} });
    assert.deepEqual((await applied(access)).headers, { Authorization: 'Bearer first' });
    writeFileSync(join(dir, 'token'), 'rotated');
    assert.deepEqual((await applied(access)).headers, { Authorization: 'Bearer rotated' });
    const both = writeKubeConfig(dir, { user: { token: 'inline', tokenFile: 'token' } }, 'both');
    assert.deepEqual((await applied(await loadKubeConfig(both, { env: {} }))).headers, {
      Authorization: 'Bearer inline',
    });
  });

  it('parses JSON kubeconfigs too (the e2e suite writes one)', async () => {
    const file = join(dir, 'config.json');
    writeFileSync(
      file,
      JSON.stringify({
        clusters: [{ name: 'c', cluster: { server: 'https://j:6443' } }],
        users: [{ name: 'u', user: { token: 'j' } }],
        contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
        'current-context': 'x',
      }),
    );
    assert.equal((await readLikeClientNode(file)).server, 'https://j:6443');
  });
});

describe('loadKubeConfig: clear errors', () => {
  const dir = caseDir();

  it('says which file and what is missing', async () => {
    const noCurrent = join(dir, 'no-current');
    writeFileSync(noCurrent, dump({ clusters: [], contexts: [], users: [] }));
    await assert.rejects(loadKubeConfig(noCurrent, { env: {} }), {
      message: `kubeconfig ${noCurrent}: no current-context is set`,
    });

    const unknownContext = join(dir, 'unknown-context');
    writeFileSync(
      unknownContext,
      dump({ contexts: [{ name: 'a', context: { cluster: 'c' } }], 'current-context': 'b' }),
    );
    await assert.rejects(loadKubeConfig(unknownContext, { env: {} }), {
      message: `kubeconfig ${unknownContext}: there is no context "b" in contexts`,
    });

    const noCluster = join(dir, 'no-cluster');
    writeFileSync(
      noCluster,
      dump({ contexts: [{ name: 'a', context: { cluster: 'c' } }], 'current-context': 'a' }),
    );
    await assert.rejects(loadKubeConfig(noCluster, { env: {} }), {
      message: `kubeconfig ${noCluster}, context "a": there is no cluster "c" in clusters`,
    });

    const noUser = join(dir, 'no-user');
    writeFileSync(
      noUser,
      dump({
        clusters: [{ name: 'c', cluster: { server: 'https://s' } }],
        contexts: [{ name: 'a', context: { cluster: 'c', user: 'gone' } }],
        'current-context': 'a',
      }),
    );
    await assert.rejects(loadKubeConfig(noUser, { env: {} }), {
      message: `kubeconfig ${noUser}, context "a": there is no user "gone" in users`,
    });

    const noServer = writeKubeConfig(dir, { cluster: { server: '' } }, 'no-server');
    await assert.rejects(loadKubeConfig(noServer, { env: {} }), {
      message: `kubeconfig ${noServer}, context "ctx", cluster "c": has no server`,
    });
  });

  it('names a file it names that cannot be read, at load', async () => {
    const file = writeKubeConfig(dir, { user: { 'client-key': 'missing.key' } }, 'missing-key');
    await assert.rejects(loadKubeConfig(file, { env: {} }), (err: Error) => {
      assert.match(
        err.message,
        /^kubeconfig .*missing-key, context "ctx": cannot read the client-key: ENOENT/,
      );
      assert.match(err.message, /missing\.key/);
      return true;
    });
    await assert.rejects(loadKubeConfig(join(dir, 'nope'), { env: {} }), {
      message: new RegExp(`^cannot read the kubeconfig ${join(dir, 'nope')} \\(from --kubeconfig\\): ENOENT`),
    });
  });

  it('refuses a plain HTTP server unless insecure-skip-tls-verify is set, as client-node does', async () => {
    const file = writeKubeConfig(dir, { cluster: { server: 'http://127.0.0.1:8080' } }, 'http');
    await assert.rejects(
      loadKubeConfig(file, { env: {} }),
      /server http:\/\/127\.0\.0\.1:8080 is plain HTTP/,
    );
    const allowed = writeKubeConfig(
      dir,
      { cluster: { server: 'http://127.0.0.1:8080', 'insecure-skip-tls-verify': true } },
      'http-allowed',
    );
    assert.equal(
      (await loadKubeConfig(allowed, { env: {} })).getCurrentCluster()?.server,
      'http://127.0.0.1:8080',
    );
  });

  it('says where it looked when there is no kubeconfig at all', async () => {
    const home = caseDir();
    await assert.rejects(
      loadKubeConfig(undefined, { env: { HOME: home }, serviceAccountDir: join(home, 'sa') }),
      { message: new RegExp(`^no kubeconfig: .*${home}/\\.kube/config does not exist.*${home}/sa/token`) },
    );
  });
});

describe('loadKubeConfig: what is left to @kubernetes/client-node', () => {
  const dir = caseDir();

  for (const [what, entry] of [
    [
      'a user with an exec plugin',
      { user: { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'false' } } },
    ],
    ['a user with an auth-provider', { user: { 'auth-provider': { name: 'oidc', config: {} } } }],
    ['a cluster with a proxy-url', { cluster: { 'proxy-url': 'http://proxy:3128' }, user: { token: 't' } }],
  ] as const) {
    it(`${what}: client-node's KubeConfig, loaded from the same file`, async () => {
      const file = writeKubeConfig(dir, entry, what.replaceAll(' ', '-'));
      const access = await loadKubeConfig(file, { env: {} });
      assert.ok(access instanceof KubeConfig);
      assert.equal(access.getCurrentCluster()?.server, 'https://kube.example:6443');
      assert.equal(access.getCurrentContext(), 'ctx');
    });
  }

  it('several files in $KUBECONFIG: merged by client-node (the last current-context set wins there)', async () => {
    const first = writeKubeConfig(dir, { user: { token: 'a' } }, 'first');
    const second = join(dir, 'second');
    writeFileSync(
      second,
      dump({
        clusters: [{ name: 'c2', cluster: { server: 'https://two:6443' } }],
        users: [{ name: 'u2', user: { token: 'b' } }],
        contexts: [{ name: 'ctx2', context: { cluster: 'c2', user: 'u2' } }],
        'current-context': 'ctx2',
      }),
    );
    const access = await loadKubeConfig(undefined, { env: { KUBECONFIG: [first, second].join(delimiter) } });
    assert.ok(access instanceof KubeConfig);
    assert.deepEqual(
      access.getContexts().map((c) => c.name),
      ['ctx', 'ctx2'],
    );
    assert.equal(access.getCurrentCluster()?.server, 'https://two:6443');
  });
});

describe('loadKubeConfig: which kubeconfig, in the order of client-node loadFromDefault', () => {
  const home = caseDir();
  mkdirSync(join(home, '.kube'));
  writeKubeConfig(join(home, '.kube'), { user: { token: 'home' } });
  const sa = join(home, 'serviceaccount');
  mkdirSync(sa);
  writeFileSync(join(sa, 'token'), 'sa-token-1');
  writeFileSync(join(sa, 'ca.crt'), 'SA CA');
  const fromEnv = writeKubeConfig(home, { user: { token: 'env' } }, 'env-config');
  const explicit = writeKubeConfig(home, { user: { token: 'flag' } }, 'flag-config');
  const inCluster = { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' };
  const load = (path: string | undefined, env: NodeJS.ProcessEnv) =>
    loadKubeConfig(path, { env, serviceAccountDir: sa }).then(applied);
  const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

  it('--kubeconfig, then $KUBECONFIG, then ~/.kube/config, then in-cluster', async () => {
    const env = { ...inCluster, HOME: home, KUBECONFIG: fromEnv };
    assert.deepEqual((await load(explicit, env)).headers, bearer('flag'));
    assert.deepEqual((await load(undefined, env)).headers, bearer('env'));
    assert.deepEqual((await load(undefined, { ...env, KUBECONFIG: '' })).headers, bearer('home'));
    assert.deepEqual((await load(undefined, inCluster)).headers, bearer('sa-token-1'));
    assert.deepEqual(
      (await load(undefined, { ...inCluster, HOME: join(home, 'none') })).headers,
      bearer('sa-token-1'),
    );
  });

  it('in-cluster: the service host and port, the CA, the token read again at every use', async () => {
    const access = await loadKubeConfig(undefined, { env: inCluster, serviceAccountDir: sa });
    assert.ok(access instanceof ClusterConnection);
    const first = await applied(access);
    assert.equal(first.server, 'https://10.96.0.1:443');
    assert.equal(first.ca, 'SA CA');
    assert.deepEqual(first.headers, bearer('sa-token-1'));
    writeFileSync(join(sa, 'token'), 'sa-token-2');
    assert.deepEqual((await applied(access)).headers, bearer('sa-token-2'));
    writeFileSync(join(sa, 'token'), 'sa-token-1');
  });

  it('in-cluster: the same as client-node loadFromCluster', async () => {
    const prefix = caseDir();
    const dir = join(prefix, 'var/run/secrets/kubernetes.io/serviceaccount');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'token'), 'tok');
    writeFileSync(join(dir, 'ca.crt'), 'CA');
    const saved = { host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT };
    for (const host of ['10.96.0.1', 'fd00::1']) {
      const env = { KUBERNETES_SERVICE_HOST: host, KUBERNETES_SERVICE_PORT: '6443' };
      Object.assign(process.env, env);
      try {
        const theirs = new KubeConfig();
        theirs.loadFromCluster(prefix);
        const ours = await loadKubeConfig(undefined, { env, serviceAccountDir: dir });
        assert.deepEqual(await applied(ours), await applied(theirs));
      } finally {
        for (const [key, value] of [
          ['KUBERNETES_SERVICE_HOST', saved.host],
          ['KUBERNETES_SERVICE_PORT', saved.port],
        ] as const) {
          if (value === undefined) delete process.env[key];
          else process.env[key] = value;
        }
      }
    }
  });

  it('in-cluster without the service variables: says so', async () => {
    await assert.rejects(loadKubeConfig(undefined, { env: {}, serviceAccountDir: sa }), {
      message: `in-cluster config: ${join(sa, 'token')} exists but KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not both set`,
    });
  });
});

describe('KubeClient with a loaded kubeconfig', () => {
  it('sends its credentials: basic auth as a header unless a token is set, impersonation', async () => {
    const seen: IncomingHttpHeaders[] = [];
    const server = createServer((req, res) => {
      seen.push(req.headers);
      res.setHeader('Content-Type', 'application/json');
      res.end('{"gitVersion":"v0"}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const dir = caseDir();
      const cluster = { server: `http://127.0.0.1:${port}`, 'insecure-skip-tls-verify': true };
      for (const [name, user] of [
        ['basic', { username: 'admin', password: 'pw', as: 'jane' }],
        ['both', { username: 'admin', password: 'pw', token: 'tok' }],
      ] as const) {
        const client = new KubeClient(await loadKubeConfig(writeKubeConfig(dir, { cluster, user }, name)));
        await client.request('GET', '/version');
      }
    } finally {
      server.close();
    }
    assert.equal(seen[0]?.authorization, `Basic ${base64('admin:pw')}`);
    assert.equal(seen[0]?.['impersonate-user'], 'jane');
    assert.equal(seen[1]?.authorization, 'Bearer tok');
  });
});
