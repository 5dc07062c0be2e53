import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { CHART_DIR } from '../../unit/packaging/manifests.ts';
import { helm, renderChart } from '../packaging/helm.ts';
import { DASHBOARD_FILE } from './queries.ts';

describe("the chart's Grafana dashboard ConfigMap", () => {
  it('is not rendered by default', async () => {
    const manifests = await renderChart();
    assert.equal(
      manifests.filter((m) => m.kind === 'ConfigMap' && m.metadata.name.endsWith('-dashboard')).length,
      0,
    );
  });

  it("carries the dashboard file whole with the sidecar's label", async () => {
    const manifests = await renderChart({ set: ['grafanaDashboard.enabled=true'] });
    const map = manifests.find(
      (m) => m.kind === 'ConfigMap' && m.metadata.name === 'basic-operator-dashboard',
    );
    assert.ok(map, 'a ConfigMap basic-operator-dashboard');
    assert.equal(map.metadata.namespace, 'basic-operator-system');
    assert.equal(map.metadata.labels?.grafana_dashboard, '1');
    const data = map.data as Record<string, string>;
    assert.deepEqual(Object.keys(data), ['basic-operator.json']);
    assert.deepEqual(
      JSON.parse(data['basic-operator.json'] ?? ''),
      JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')),
    );
  });

  it("takes the sidecar's label, a folder annotation and its namespace from the values", async () => {
    const manifests = await renderChart({
      set: [
        'grafanaDashboard.enabled=true',
        'grafanaDashboard.labels.grafana_dashboard=null',
        'grafanaDashboard.labels.dashboards=operators',
        'grafanaDashboard.annotations.grafana_folder=Operators',
        'grafanaDashboard.namespace=monitoring',
      ],
    });
    const map = manifests.find(
      (m) => m.kind === 'ConfigMap' && m.metadata.name === 'basic-operator-dashboard',
    );
    assert.equal(map?.metadata.namespace, 'monitoring');
    assert.equal(map?.metadata.labels?.dashboards, 'operators');
    assert.equal(map?.metadata.labels?.grafana_dashboard, undefined);
    assert.equal(map?.metadata.annotations?.grafana_folder, 'Operators');
  });

  it('passes helm lint --strict and the values schema rejects unknown keys', async () => {
    const lint = await helm(['lint', '--strict', CHART_DIR, '--set', 'grafanaDashboard.enabled=true']);
    assert.equal(lint.code, 0, `${lint.stdout}${lint.stderr}`);
    const wrong = await helm(['template', 'x', CHART_DIR, '--set', 'grafanaDashboard.label=foo']);
    assert.notEqual(wrong.code, 0);
    assert.match(wrong.stderr, /grafanaDashboard/);
  });
});
