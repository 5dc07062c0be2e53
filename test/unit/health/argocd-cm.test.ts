// config/argocd/argocd-cm-patch.yaml holds every health.lua as Argo CD's argocd-cm wants it
// (`resource.customizations.health.<group>_<Kind>`), so it can be applied as a patch. It must match
// the scripts: UPDATE_ARGOCD_CM=1 rewrites it from them.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { dump, load } from 'js-yaml';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const CUSTOMIZATIONS = join(ROOT, 'config', 'argocd', 'resource_customizations');
const PATCH = join(ROOT, 'config', 'argocd', 'argocd-cm-patch.yaml');

function expected(): Record<string, unknown> {
  const data: Record<string, string> = {};
  for (const group of readdirSync(CUSTOMIZATIONS).sort()) {
    for (const kind of readdirSync(join(CUSTOMIZATIONS, group)).sort()) {
      data[`resource.customizations.health.${group}_${kind}`] = readFileSync(
        join(CUSTOMIZATIONS, group, kind, 'health.lua'),
        'utf8',
      );
    }
  }
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'argocd-cm', labels: { 'app.kubernetes.io/part-of': 'argocd' } },
    data,
  };
}

describe('config/argocd/argocd-cm-patch.yaml', () => {
  it('holds every health script under its argocd-cm key', () => {
    const want = expected();
    if (process.env.UPDATE_ARGOCD_CM === '1') {
      const header =
        "# Argo CD health checks for basic-operator's kinds (docs/health.md), from\n" +
        '# config/argocd/resource_customizations/. Apply to a running Argo CD with:\n' +
        '#   kubectl -n argocd patch configmap argocd-cm --patch-file config/argocd/argocd-cm-patch.yaml\n';
      writeFileSync(PATCH, header + dump(want, { lineWidth: -1 }));
    }
    assert.deepEqual(
      load(readFileSync(PATCH, 'utf8')),
      want,
      'out of date: run UPDATE_ARGOCD_CM=1 node --test test/unit/health/argocd-cm.test.ts',
    );
    assert.equal(Object.keys((want as { data: object }).data).length, 5);
  });
});
