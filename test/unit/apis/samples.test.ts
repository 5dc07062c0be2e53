import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { load, loadAll } from 'js-yaml';
import {
  type ValidationResult,
  validateBasicDeployment,
  validateBasicReplicaSet,
  validateMachine,
  validatePodMachine,
  validateVolumeBackup,
} from '../../../src/apis/index.ts';

const samplesDir = new URL('../../../config/samples/', import.meta.url);
const readSample = (name: string): unknown => load(readFileSync(new URL(name, samplesDir), 'utf8'));

const SAMPLES: Record<string, (object: unknown) => ValidationResult> = {
  'apps_v1alpha1_basicdeployment.yaml': validateBasicDeployment,
  'apps_v1alpha1_basicreplicaset.yaml': validateBasicReplicaSet,
  'infra_v1alpha1_machine.yaml': validateMachine,
  'infra_v1alpha1_podmachine.yaml': validatePodMachine,
};

describe('config/samples', () => {
  for (const [name, validate] of Object.entries(SAMPLES)) {
    it(`${name} is valid`, () => assert.deepEqual(validate(readSample(name)), { valid: true }));
  }

  it('holds only the samples, so `kubectl apply -f config/samples` applies exactly one of each kind', () => {
    const files = readdirSync(samplesDir).filter((f) => f.endsWith('.yaml'));
    assert.deepEqual(files.sort(), Object.keys(SAMPLES).sort());
  });

  it('use the pause image and small volumes', () => {
    for (const name of Object.keys(SAMPLES)) {
      const text = readFileSync(new URL(name, samplesDir), 'utf8');
      assert.match(text, /image: registry\.k8s\.io\/pause:3\.10\n/);
    }
    assert.match(readFileSync(new URL('infra_v1alpha1_machine.yaml', samplesDir), 'utf8'), /size: 1Gi\n/);
  });
});

const VALIDATE_KIND: Record<string, (object: unknown) => ValidationResult> = {
  'apps.basicoperator.dev/v1alpha1 BasicDeployment': validateBasicDeployment,
  'apps.basicoperator.dev/v1alpha1 BasicReplicaSet': validateBasicReplicaSet,
  'infra.basicoperator.dev/v1alpha1 Machine': validateMachine,
  'infra.basicoperator.dev/v1alpha1 PodMachine': validatePodMachine,
  'infra.basicoperator.dev/v1alpha1 VolumeBackup': validateVolumeBackup,
};

/** The objects of every ```yaml block of README.md and docs/*.md that have an apiVersion and a kind. */
function documentedObjects(): { where: string; object: { apiVersion: string; kind: string } }[] {
  const root = new URL('../../../', import.meta.url);
  const docs = [
    'README.md',
    ...readdirSync(new URL('docs/', root))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
  return docs.flatMap((doc) => {
    const blocks = readFileSync(new URL(doc, root), 'utf8')
      .split(/^```yaml\n/m)
      .slice(1);
    return blocks.flatMap((block, i) =>
      loadAll(block.slice(0, block.indexOf('\n```')))
        .filter(
          (o): o is { apiVersion: string; kind: string } =>
            typeof o === 'object' && o !== null && 'apiVersion' in o && 'kind' in o,
        )
        .map((object) => ({ where: `${doc}, yaml block ${i + 1}`, object })),
    );
  });
}

describe('manifests in README.md and docs/', () => {
  it("every object of the operator's kinds is valid for today's schema", () => {
    const checked = documentedObjects().filter(
      ({ object }) => VALIDATE_KIND[`${object.apiVersion} ${object.kind}`] !== undefined,
    );
    const kinds = new Set(checked.map(({ object }) => object.kind));
    assert.ok(kinds.has('Machine') && kinds.has('PodMachine'), `found ${[...kinds].join(', ')}`);
    for (const { where, object } of checked) {
      const validate = VALIDATE_KIND[`${object.apiVersion} ${object.kind}`]!;
      // What a reader would apply: the docs show a status (abbreviated) only to explain it.
      const { status: _shown, ...applied } = object as { status?: unknown };
      assert.deepEqual(validate(applied), { valid: true }, `${object.kind} in ${where}`);
    }
  });
});
