import assert from 'node:assert/strict';
import { after, before, describe } from 'node:test';
import type { CoreV1Event, V1Service } from '@kubernetes/client-node';
import type { BasicDeployment } from '../../../src/apis/index.ts';
import { sleep } from '../../support/wait.ts';
import {
  containerStatus,
  KIND_ONLY,
  KindRelease,
  check as kindCheck,
  note,
  podReady,
  restrictedContainerSecurity,
  restrictedPod,
  restrictedPodSecurity,
  runPod,
  seconds,
} from '../support/kind.ts';
import { theOnly } from '../support/release.ts';

/**
 * What the kubelet and the cluster network do with the chart's operator: its pods become Ready
 * through the readiness probe (/readyz) and the liveness probe (/healthz) never restarts them; a pod
 * inside the cluster scrapes the metrics Service by its DNS name over HTTPS, refused (401) without a
 * token and answered with the token of a ServiceAccount bound to the metrics-reader ClusterRole
 * (both replicas answer behind it, the leader with its reconcile counts); `helm test` passes.
 */

/** Scrapes through the Service in one pod: the Service spreads them over both replicas. */
const SCRAPES = 20;

describe('probes, in-cluster metrics and helm test (kind)', { skip: KIND_ONLY }, () => {
  let release: KindRelease;

  before(async () => {
    release = await KindRelease.create({ topic: 'probes' });
    await release.install();
  });

  after(async () => {
    await release?.cleanup();
  });

  const check = (name: string, timeoutMs: number, body: () => Promise<void>) =>
    kindCheck(() => release, name, timeoutMs, body);

  check('the operator pods become Ready through their readiness probe', 150_000, async () => {
    const pods = await release.readyOperatorPods();
    for (const pod of pods) {
      const name = pod.metadata?.name ?? '';
      const container = pod.spec?.containers.find((c) => c.name === 'manager');
      assert.equal(container?.readinessProbe?.httpGet?.path, '/readyz', `${name} has the readiness probe`);
      assert.equal(container?.livenessProbe?.httpGet?.path, '/healthz', `${name} has the liveness probe`);
      // Ready came after the container started: the kubelet waited for the probe.
      const started = Date.parse(String(containerStatus(pod, 'manager')?.state?.running?.startedAt ?? ''));
      const readyAt = Date.parse(
        String(pod.status?.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime ?? ''),
      );
      assert.ok(
        readyAt >= started,
        `${name} turned Ready (${readyAt}) after its container started (${started})`,
      );
      // The endpoints the probes call answer 200 on both replicas, the standby too.
      for (const path of ['/readyz', '/healthz']) {
        const proxy = `/api/v1/namespaces/${release.namespace}/pods/${name}:8081/proxy${path}`;
        assert.equal((await release.kubectlOk(['get', '--raw', proxy])).trim(), 'ok', `${name} ${path}`);
      }
      note(
        `${name}: container started ${new Date(started).toISOString()}, Ready at ${new Date(readyAt).toISOString()}`,
      );
    }
  });

  check(
    'a pod in the cluster scrapes the metrics Service and finds the operator metrics',
    240_000,
    async () => {
      // Something for the controllers to do, so the leader's reconcile counters move.
      await release.apply(
        basicDeployment(release.workloadNamespace, release.cluster.images?.workload ?? 'busybox:1.36'),
      );
      await release.waitFor(
        'basicdeployment/metrics-app to be Ready',
        async () => {
          const bd = await release.get<BasicDeployment>('basicdeployment/metrics-app');
          return bd.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
        },
        { timeoutMs: 120_000, refs: ['basicdeployment/metrics-app'] },
      );
      const service = theOnly<V1Service>(release.manifests, 'Service');
      const port = service.spec?.ports?.find((p) => p.name === 'metrics')?.port;
      const url = `https://${service.metadata.name}.${release.namespace}.svc:${port}/metrics`;
      // As Prometheus scrapes: a ServiceAccount bound to the chart's metrics-reader ClusterRole, its
      // token as the bearer, the operator's self-signed certificate not verified.
      const scraper = await metricsReaderAccount(release);
      // Node of the operator's image: busybox's wget cannot do the TLS handshake OpenSSL 3 requires.
      // A new connection per scrape (agent: false), so the Service spreads them over both replicas.
      const script = `
        const https = require('node:https');
        const token = require('node:fs').readFileSync('/var/run/secrets/kubernetes.io/serviceaccount/token', 'utf8').trim();
        const get = (headers) => new Promise((resolve, reject) => {
          const req = https.get(${JSON.stringify(url)}, { headers, rejectUnauthorized: false, timeout: 10000, agent: false }, (res) => {
            let body = '';
            res.setEncoding('utf8');
            res.on('data', (c) => { body += c; });
            res.on('end', () => resolve({ status: res.statusCode, body }));
          });
          req.on('timeout', () => req.destroy(new Error('no answer within 10 s')));
          req.on('error', reject);
        });
        (async () => {
          const anonymous = await get({});
          if (anonymous.status !== 401) { console.log('a scrape without a token answered ' + anonymous.status); process.exit(1); }
          console.log('=== 401 without a token');
          for (let i = 0; i < ${SCRAPES}; i++) {
            const scraped = await get({ Authorization: 'Bearer ' + token });
            if (scraped.status !== 200) { console.log('HTTP ' + scraped.status + ': ' + scraped.body); process.exit(1); }
            console.log(scraped.body);
            console.log('=== end of scrape');
          }
        })().catch((err) => { console.log(err.message); process.exit(1); });
      `;
      const pod = restrictedPod(
        'scrape-metrics',
        release.namespace,
        release.cluster.images?.operator ?? 'basic-operator:dev',
        script,
      );
      const container = pod.spec?.containers[0];
      if (container) container.command = ['/nodejs/bin/node', '-e', script];
      if (pod.spec) {
        pod.spec.serviceAccountName = scraper;
        pod.spec.automountServiceAccountToken = true;
      }
      const log = await runPod(release, pod);
      const [unauthenticated = '', authorized = ''] = log.split('=== 401 without a token');
      assert.equal(unauthenticated.trim(), '', 'the scrape without a token was refused with 401');
      const scrapes = authorized.split('=== end of scrape').filter((s) => s.trim() !== '');
      assert.equal(scrapes.length, SCRAPES, `${SCRAPES} scrapes answered:\n${log.slice(0, 2000)}`);
      const lease = release.leaseName.replace(/\./g, '\\.');
      let leader = 0;
      let standby = 0;
      let reconciled = 0;
      for (const scrape of scrapes) {
        for (const metric of [
          'controller_runtime_reconcile_total',
          'controller_runtime_max_concurrent_reconciles',
          'workqueue_depth',
          'rest_client_requests_total',
        ]) {
          assert.match(
            scrape,
            new RegExp(`^${metric}\\{`, 'm'),
            `a scrape without ${metric}:\n${scrape.slice(0, 1500)}`,
          );
        }
        // The image sizes the heap from the pod's memory limit (the chart's default, 512Mi).
        const limit = Number(/^basic_operator_memory_limit_bytes (\d+)$/m.exec(scrape)?.[1]);
        const heap = Number(/^basic_operator_heap_limit_bytes (\d+)$/m.exec(scrape)?.[1]);
        assert.equal(limit, 512 * 1048576, 'the operator sees its container memory limit');
        assert.ok(
          heap >= 0.55 * limit && heap <= limit - 64 * 1048576,
          `heap limit ${heap} sized from the memory limit ${limit}`,
        );
        const status = new RegExp(`^leader_election_master_status\\{name="${lease}"\\} ([01])$`, 'm').exec(
          scrape,
        );
        assert.ok(status, `a scrape without leader_election_master_status for ${release.leaseName}`);
        if (status[1] === '1') {
          leader += 1;
          const success =
            /^controller_runtime_reconcile_total\{controller="basicdeployment",result="success"\} (\d+)$/m.exec(
              scrape,
            );
          reconciled = Math.max(reconciled, Number(success?.[1] ?? 0));
          assert.match(
            scrape,
            /^controller_runtime_reconcile_time_seconds_bucket\{le="[^"]+",controller="basicdeployment"\} \d+$/m,
            "the leader's reconcile time histogram has observations",
          );
        } else {
          standby += 1;
        }
      }
      note(
        `${SCRAPES} scrapes of ${url}: ${leader} answered by the leader, ${standby} by the standby; the leader counts ${reconciled} successful basicdeployment reconciles`,
      );
      assert.ok(leader > 0, 'the leader answered at least one scrape');
      assert.ok(reconciled > 0, "the leader's basicdeployment reconciles are counted");
    },
  );

  check('helm test passes', 120_000, async () => {
    await release.helmTest();
  });

  check('the liveness probe never restarts them', 120_000, async () => {
    const pods = await release.operatorPods();
    assert.equal(pods.length, 2);
    const container = pods[0]?.spec?.containers.find((c) => c.name === 'manager');
    const probe = container?.livenessProbe;
    // Long enough for the kubelet to act on failures: the initial delay plus failureThreshold periods, and one more.
    const window =
      ((probe?.initialDelaySeconds ?? 0) +
        (probe?.periodSeconds ?? 10) * ((probe?.failureThreshold ?? 3) + 1)) *
      1000;
    const oldest = Math.min(
      ...pods.map((p) => Date.parse(String(containerStatus(p, 'manager')?.state?.running?.startedAt ?? ''))),
    );
    const wait = oldest + window - Date.now();
    if (wait > 0) {
      note(
        `waiting ${seconds(wait)} more, until the operator containers ran ${seconds(window)} under the liveness probe`,
      );
      await sleep(wait);
    }
    const now = await release.operatorPods();
    assert.deepEqual(
      now.map((p) => p.metadata?.uid).sort(),
      pods.map((p) => p.metadata?.uid).sort(),
      'the same two operator pods',
    );
    assert.deepEqual(await release.unexpectedRestarts(now), [], 'no operator pod restarted but by design');
    for (const pod of now) assert.ok(podReady(pod), `${pod.metadata?.name} is still Ready`);
    const events = await release.events(release.namespace);
    const liveness = events.filter(
      (e: CoreV1Event) =>
        (e.reason === 'Unhealthy' && /Liveness/.test(e.message ?? '')) || e.reason === 'Killing',
    );
    assert.deepEqual(
      liveness.map((e) => `${e.involvedObject.name}: ${e.reason} ${e.message}`),
      [],
      'no liveness failure or kill',
    );
  });
});

/**
 * ServiceAccount metrics-scraper in the operator's namespace, bound to the release's metrics-reader
 * ClusterRole (the binding is owned by that role, so uninstalling the release removes it).
 */
async function metricsReaderAccount(release: KindRelease): Promise<string> {
  const role = release.manifests.find(
    (m) => m.kind === 'ClusterRole' && m.metadata.name.endsWith('-metrics-reader'),
  )?.metadata.name;
  assert.ok(role, 'the chart renders a metrics-reader ClusterRole');
  const uid = (
    await release.kubectlOk(['get', 'clusterrole', role, '-o', 'jsonpath={.metadata.uid}'])
  ).trim();
  const name = 'metrics-scraper';
  await release.apply(
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: release.namespace } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: {
        name: `${role}-${release.namespace}-scraper`,
        ownerReferences: [
          { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: role, uid },
        ],
      },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
      subjects: [{ kind: 'ServiceAccount', name, namespace: release.namespace }],
    },
  );
  return name;
}

function basicDeployment(namespace: string, image: string): BasicDeployment {
  return {
    apiVersion: 'apps.basicoperator.dev/v1alpha1',
    kind: 'BasicDeployment',
    metadata: { name: 'metrics-app', namespace },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'metrics-app' } },
      template: {
        metadata: { labels: { app: 'metrics-app' } },
        spec: {
          terminationGracePeriodSeconds: 1,
          securityContext: restrictedPodSecurity,
          containers: [
            {
              name: 'main',
              image,
              imagePullPolicy: 'IfNotPresent',
              command: ['sh', '-c', "trap 'exit 0' TERM; sleep 3600 & wait"],
              securityContext: restrictedContainerSecurity,
            },
          ],
        },
      },
    },
  };
}
