// The chart's Grafana dashboard against real data: Debian's Prometheus scrapes the operator (every
// controller, plain HTTP metrics, leader election and a client rate limit on, so every panel has
// something to show) every second while a small workload runs; then each query of the dashboard,
// with Grafana's variables filled in, must return numbers. When the chart has a PrometheusRule
// (rendered with helm template), each vector selector of each alert expression must match series too.
// BASIC_OPERATOR_DASHBOARD_DATA=<dir> keeps every panel's range result there (for scripts/plot-panel.ts).
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ensurePrometheus } from '../../../e2e/providers/local/prometheus.ts';
import { testClient, testCluster } from '../../../e2e/support/cluster.ts';
import { httpGet } from '../../../e2e/support/http.ts';
import { createNamespace, deleteNamespace } from '../../../e2e/support/namespace.ts';
import { freePort, OperatorProcess } from '../../../e2e/support/operator-process.ts';
import { waitFor } from '../../../e2e/support/wait.ts';
import { BASIC_DEPLOYMENT, type BasicDeployment, MACHINE } from '../../../src/apis/index.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { CHART_DIR, parseManifests, REPO_ROOT } from '../../unit/packaging/manifests.ts';
import {
  isRunningAndReady,
  machine,
  prepareCluster,
  releaseMachines,
  waitForMachine,
} from '../machine/helpers.ts';
import { helm } from '../packaging/helm.ts';
import { dashboardQueries, substitute, vectorSelectors } from './queries.ts';

/** The job label a ServiceMonitor of the default release gives the scrape (the Service's name). */
const JOB = 'basic-operator-metrics';
const RATE_INTERVAL = '10s';

interface QueryResponse {
  status: string;
  error?: string;
  data?: {
    result: Array<{
      metric: Record<string, string>;
      values?: Array<[number, string]>;
      value?: [number, string];
    }>;
  };
}

function deployment(namespace: string, name: string, replicas: number): BasicDeployment {
  return {
    apiVersion: BASIC_DEPLOYMENT.apiVersion,
    kind: BASIC_DEPLOYMENT.kind,
    metadata: { name, namespace },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
      },
    },
  };
}

describe('the Grafana dashboard against Prometheus scraping the operator during a workload', () => {
  let client: KubeClient;
  let ns: string;
  let workdir: string;
  let operator: OperatorProcess | undefined;
  let prometheus: OperatorProcess | undefined;
  let prometheusPort = 0;
  let workloadStart = 0;
  let workloadEnd = 0;

  async function query(path: string, params: Record<string, string>): Promise<QueryResponse> {
    const { status, body } = await httpGet(prometheusPort, `${path}?${new URLSearchParams(params)}`);
    const parsed = JSON.parse(body) as QueryResponse;
    if (status !== 200 || parsed.status !== 'success') throw new Error(`${status} ${parsed.error ?? body}`);
    return parsed;
  }

  const rangeQuery = (expr: string) =>
    query('/api/v1/query_range', {
      query: expr,
      start: String(workloadStart),
      end: String(workloadEnd),
      step: '1',
    });

  before(async () => {
    const started = Date.now();
    const binary = await ensurePrometheus();
    process.stderr.write(`[dashboard] prometheus ready in ${Date.now() - started} ms\n`);
    await prepareCluster(2);
    client = await testClient();
    ns = await createNamespace(client, 'dashboard');
    workdir = mkdtempSync(join(tmpdir(), 'basic-operator-dashboard-'));

    const metricsPort = await freePort();
    operator = new OperatorProcess({
      name: 'operator',
      args: [
        join(REPO_ROOT, 'src/main.ts'),
        '--kubeconfig',
        (await testCluster()).kubeconfig,
        '--namespaces',
        ns,
        '--metrics-bind-address',
        `127.0.0.1:${metricsPort}`,
        '--metrics-secure=false',
        '--health-probe-bind-address',
        '0',
        '--leader-elect',
        '--leader-election-namespace',
        ns,
        '--kube-api-qps',
        '50',
        '--log-level',
        'info',
      ],
      logFile: join(workdir, 'operator.log'),
    });
    await operator.controllersStarted(90_000);

    prometheusPort = await freePort();
    const config = {
      global: { scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' },
      scrape_configs: [
        {
          job_name: JOB,
          static_configs: [
            { targets: [`127.0.0.1:${metricsPort}`], labels: { namespace: ns, pod: 'basic-operator-local' } },
          ],
        },
      ],
    };
    writeFileSync(join(workdir, 'prometheus.yml'), JSON.stringify(config));
    prometheus = new OperatorProcess({
      name: 'prometheus',
      command: binary,
      args: [
        `--config.file=${join(workdir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(workdir, 'data')}`,
        `--web.listen-address=127.0.0.1:${prometheusPort}`,
      ],
      logFile: join(workdir, 'prometheus.log'),
    });
    await prometheus.waitForHttp('ready', prometheusPort, '/-/ready');
    await waitFor(
      'Prometheus to scrape the operator',
      // Two samples of up, not an instant query: the first scrape comes some seconds after start.
      async () =>
        ((await query('/api/v1/query', { query: `up{job="${JOB}"}[30s]` })).data?.result[0]?.values?.length ??
          0) >= 2,
      { timeoutMs: 30_000, intervalMs: 500 },
    );

    // The workload, in steps a few seconds apart so the rates show them: three BasicDeployments of
    // two replicas, scaled to four, a Machine, then scaled down to one.
    workloadStart = Math.floor(Date.now() / 1000);
    const names = ['web', 'api', 'worker'];
    const scaleAll = async (replicas: number) => {
      for (const name of names) {
        await client.patch(BASIC_DEPLOYMENT, {
          namespace: ns,
          name,
          patchType: 'merge',
          body: { spec: { replicas } },
        });
      }
      await readyAll(replicas);
    };
    const readyAll = async (replicas: number) => {
      for (const name of names) {
        await waitFor(
          `BasicDeployment ${name} to have ${replicas} ready replicas`,
          async () => {
            const status = (await client.get<BasicDeployment>(BASIC_DEPLOYMENT, ns, name))?.status;
            return status?.readyReplicas === replicas && status.replicas === replicas;
          },
          { timeoutMs: 90_000, intervalMs: 500 },
        );
      }
    };
    const pause = () => new Promise((resolve) => setTimeout(resolve, 4000));
    for (const name of names) await client.create(BASIC_DEPLOYMENT, deployment(ns, name, 2));
    await readyAll(2);
    await pause();
    await scaleAll(4);
    await pause();
    await client.create(MACHINE, machine(ns, 'db'));
    await waitForMachine(client, ns, 'db', 'Running and Ready', isRunningAndReady, 90_000);
    await pause();
    await scaleAll(1);
    // A few more scrapes so every rate has two samples after the last change.
    await pause();
    workloadEnd = Math.ceil(Date.now() / 1000);
    process.stderr.write(`[dashboard] workload from ${workloadStart} to ${workloadEnd}\n`);
  });

  after(async () => {
    await prometheus?.stop();
    await operator?.stop();
    if (client && ns) {
      await releaseMachines(client, ns);
      await deleteNamespace(client, ns);
    }
    if (workdir) rmSync(workdir, { recursive: true, force: true });
  });

  it('every query of every panel returns numbers', async () => {
    const keep = process.env.BASIC_OPERATOR_DASHBOARD_DATA;
    if (keep) mkdirSync(keep, { recursive: true });
    const empty: string[] = [];
    const queries = dashboardQueries();
    assert.ok(queries.length > 10, `the dashboard has ${queries.length} queries`);
    for (const { panel, refId, expr } of queries) {
      const sent = substitute(expr, { job: JOB, rateInterval: RATE_INTERVAL });
      const response = await rangeQuery(sent);
      const result = response.data?.result ?? [];
      const numbers = result.some((series) => series.values?.some(([, v]) => !Number.isNaN(Number(v))));
      if (!numbers) empty.push(`${panel} ${refId}: ${sent}`);
      if (keep) {
        const file = `${panel.toLowerCase().replace(/[^a-z0-9]+/g, '-')}-${refId}.json`;
        writeFileSync(join(keep, file), JSON.stringify(response));
      }
    }
    assert.deepEqual(
      empty,
      [],
      `queries with no data:\n${empty.join('\n')}\nup: ${JSON.stringify((await rangeQuery('up')).data)}\n${prometheus?.describe()}`,
    );
  });

  it("every vector selector of the chart's alert rules matches series (when the chart has rules)", async (t) => {
    // Rendered into the namespace the scrape labels name, as the release's own namespace would be.
    const rules = await renderedAlertExpressions(ns);
    if (rules === undefined) {
      t.skip('the chart has no PrometheusRule template');
      return;
    }
    assert.ok(rules.length > 0, 'the PrometheusRule has alerts');
    const missing: string[] = [];
    for (const { alert, expr } of rules) {
      for (const selector of vectorSelectors(expr)) {
        const result = (await rangeQuery(selector)).data?.result ?? [];
        if (result.length === 0) missing.push(`${alert}: ${selector}`);
      }
    }
    assert.deepEqual(missing, [], `alert selectors matching no series:\n${missing.join('\n')}`);
  });
});

/**
 * The alert expressions of the chart's PrometheusRule, rendered into `namespace` with its template's
 * guard value (`.Values.X.enabled`) set to true; undefined when no template makes a PrometheusRule.
 */
async function renderedAlertExpressions(
  namespace: string,
): Promise<Array<{ alert: string; expr: string }> | undefined> {
  const templates = join(CHART_DIR, 'templates');
  const guards = readdirSync(templates, { withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => readFileSync(join(templates, entry.name), 'utf8'))
    .filter((text) => /^kind:\s*PrometheusRule\s*$/m.test(text))
    .map((text) => /\{\{-?\s*if\s+\.Values\.([\w.]+)\.enabled\b/.exec(text)?.[1]);
  if (guards.length === 0) return undefined;
  const args = ['template', 'basic-operator', CHART_DIR, '--namespace', namespace];
  for (const guard of guards) if (guard) args.push('--set', `${guard}.enabled=true`);
  const result = await helm(args);
  assert.equal(result.code, 0, result.stderr);
  const out: Array<{ alert: string; expr: string }> = [];
  for (const manifest of parseManifests(result.stdout).filter((m) => m.kind === 'PrometheusRule')) {
    const spec = manifest.spec as { groups?: Array<{ rules?: Array<{ alert?: string; expr?: string }> }> };
    for (const group of spec.groups ?? []) {
      for (const rule of group.rules ?? []) {
        if (rule.alert && rule.expr) out.push({ alert: rule.alert, expr: String(rule.expr) });
      }
    }
  }
  return out;
}
