import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { objectFromSample, readSample } from '../../../e2e/contract/sample.ts';

const target = { kind: 'PodMachine', group: 'infra.basicoperator.dev' };
const dir = mkdtempSync(join(tmpdir(), 'contract-sample-'));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

describe('readSample', () => {
  it('reads one object of the kind', async () => {
    const path = file(
      'ok.yaml',
      'apiVersion: infra.basicoperator.dev/v1alpha1\nkind: PodMachine\nmetadata:\n  name: s\nspec:\n  image: pause\n',
    );
    assert.deepEqual(await readSample(path, target), {
      apiVersion: 'infra.basicoperator.dev/v1alpha1',
      kind: 'PodMachine',
      metadata: { name: 's' },
      spec: { image: 'pause' },
    });
  });

  it('refuses several objects, another kind or group, and a file that is not there', async () => {
    const two = file('two.yaml', 'kind: PodMachine\n---\nkind: PodMachine\n');
    await assert.rejects(readSample(two, target), {
      message: `--sample ${two}: must hold one object (a YAML mapping), it holds 2 document(s)`,
    });
    const machine = file('machine.yaml', 'kind: Machine\n');
    await assert.rejects(readSample(machine, target), {
      message: `--sample ${machine}: its kind is "Machine", not PodMachine`,
    });
    const other = file('other.yaml', 'apiVersion: examples.basicoperator.dev/v1alpha1\nkind: PodMachine\n');
    await assert.rejects(readSample(other, target), {
      message: `--sample ${other}: its apiVersion "examples.basicoperator.dev/v1alpha1" is not in the group infra.basicoperator.dev`,
    });
    await assert.rejects(
      readSample(join(dir, 'missing.yaml'), target),
      /^Error: --sample .*missing\.yaml: ENOENT/,
    );
  });
});

describe('objectFromSample', () => {
  it("gives the sample the kit's name, namespace and version, without server-set fields or status", () => {
    const sample = {
      apiVersion: 'infra.basicoperator.dev/v1beta1',
      kind: 'PodMachine',
      metadata: { name: 's', namespace: 'prod', labels: { team: 'a' }, uid: 'u', resourceVersion: '7' },
      spec: { image: 'pause' },
      status: { ready: true },
    };
    assert.deepEqual(objectFromSample(sample, target, 'v1alpha1', 'ns', 'contract-test-1'), {
      apiVersion: 'infra.basicoperator.dev/v1alpha1',
      kind: 'PodMachine',
      metadata: { labels: { team: 'a' }, name: 'contract-test-1', namespace: 'ns' },
      spec: { image: 'pause' },
    });
  });

  it('makes an object with an empty spec without a sample', () => {
    assert.deepEqual(objectFromSample(undefined, target, 'v1alpha1', 'ns', 'n'), {
      apiVersion: 'infra.basicoperator.dev/v1alpha1',
      kind: 'PodMachine',
      metadata: { name: 'n', namespace: 'ns' },
      spec: {},
    });
  });
});
