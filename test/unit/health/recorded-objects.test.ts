// The Argo CD health scripts (config/argocd/resource_customizations, run with gopher-lua as Argo CD
// runs them) and kstatus (sigs.k8s.io/cli-utils) on objects recorded from the local cluster in each
// state (test/integration/health/live.test.ts with RECORD_HEALTH_FIXTURES=1). The first run builds
// the two Go programs into the cache (seconds once the modules are downloaded).
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  argoHealth,
  FIXTURES,
  type HealthFixture,
  type HealthObject,
  healthScript,
  kstatus,
  readFixture,
} from '../../support/health.ts';

const fixtures: Array<[string, HealthFixture]> = readdirSync(FIXTURES)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((f) => [f.replace(/\.json$/, ''), readFixture(join(FIXTURES, f))]);

const KINDS: Array<[string, string]> = [
  ['apps.basicoperator.dev/v1alpha1', 'BasicDeployment'],
  ['apps.basicoperator.dev/v1alpha1', 'BasicReplicaSet'],
  ['infra.basicoperator.dev/v1alpha1', 'Machine'],
  ['infra.basicoperator.dev/v1alpha1', 'PodMachine'],
  ['infra.basicoperator.dev/v1alpha1', 'VolumeBackup'],
];

describe('recorded objects: Argo CD health and kstatus', () => {
  it('there is a script for every kind, and a recorded object of every kind', () => {
    for (const [apiVersion, kind] of KINDS) {
      assert.ok(existsSync(healthScript(apiVersion, kind)), `${kind} has a health.lua`);
      assert.ok(
        fixtures.some(([, f]) => f.object.kind === kind),
        `a recorded ${kind}`,
      );
    }
  });

  for (const [name, fixture] of fixtures) {
    it(`${name} (${fixture.state}): Argo CD ${fixture.argocd}, kstatus ${fixture.kstatus}`, async () => {
      const [argo] = await argoHealth([fixture.object]);
      assert.equal(argo?.status, fixture.argocd, argo?.message);
      assert.ok(argo?.message, 'says why');
      const [k] = await kstatus([fixture.object]);
      assert.equal(k?.status, fixture.kstatus, k?.message);
    });
  }

  it('an object the controller has not reported on yet: Progressing for Argo CD; kstatus cannot tell', async () => {
    const healthy = [
      'basicdeployment-ready',
      'basicreplicaset-ready',
      'machine-running',
      'podmachine-running',
      'volumebackup-completed',
    ];
    for (const name of healthy) {
      const recorded = fixtures.find(([n]) => n === name)?.[1].object;
      assert.ok(recorded, name);
      const { status: _status, ...fresh } = recorded as HealthObject & { status?: unknown };
      const [argo] = await argoHealth([fresh]);
      assert.equal(argo?.status, 'Progressing', `${name}: ${argo?.message}`);
      assert.equal(argo?.message, 'Waiting for the controller to report status');
      // Without status.observedGeneration and conditions kstatus assumes Current (docs/health.md).
      const [k] = await kstatus([fresh]);
      assert.equal(k?.status, 'Current', name);
    }
  });

  it('a spec change the controller has not observed yet is Progressing, even after it was Healthy', async () => {
    const ready = fixtures.find(([name]) => name === 'basicdeployment-ready')?.[1].object as
      | (HealthObject & { metadata: { generation: number } })
      | undefined;
    assert.ok(ready);
    const edited = { ...ready, metadata: { ...ready.metadata, generation: ready.metadata.generation + 1 } };
    const [argo] = await argoHealth([edited]);
    assert.equal(argo?.status, 'Progressing');
    assert.match(argo?.message ?? '', /Waiting for the controller to observe generation \d+/);
    const [k] = await kstatus([edited]);
    assert.equal(k?.status, 'InProgress');
  });
});
