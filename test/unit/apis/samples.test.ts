import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { load } from 'js-yaml';
import {
  type ValidationResult,
  validateBasicDeployment,
  validateBasicReplicaSet,
  validateMachine,
  validatePodMachine,
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
