import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { objectFromSample, readSample } from '../../../e2e/contract/sample.ts';
import { tempDir } from '../../support/temp-dir.ts';

const target = { kind: 'PodMachine', group: 'infra.basicoperator.dev' };
const dir = tempDir('contract-sample-');
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

  it('takes the one object of the kind from a file that holds others too', async () => {
    const path = file(
      'with-machine.yaml',
      'kind: PodMachine\nspec:\n  image: pause\n---\napiVersion: infra.basicoperator.dev/v1alpha1\nkind: Machine\n',
    );
    assert.deepEqual(await readSample(path, target), { kind: 'PodMachine', spec: { image: 'pause' } });
    const bare = file('bare.yaml', 'spec:\n  image: pause\n');
    assert.deepEqual(
      await readSample(bare, target),
      { spec: { image: 'pause' } },
      'one object may leave its kind out',
    );
  });

  it('refuses no or several objects of the kind, another group, and a file that is not there', async () => {
    const two = file('two.yaml', 'kind: PodMachine\n---\nkind: PodMachine\n');
    await assert.rejects(readSample(two, target), {
      message: `--sample ${two}: must hold one object of kind PodMachine; it holds 2 (of 2 document(s): PodMachine, PodMachine)`,
    });
    const machine = file('machine.yaml', 'kind: Machine\n');
    await assert.rejects(readSample(machine, target), {
      message: `--sample ${machine}: must hold one object of kind PodMachine; it holds 0 (of 1 document(s): Machine)`,
    });
    const empty = file('empty.yaml', '# nothing\n');
    await assert.rejects(readSample(empty, target), {
      message: `--sample ${empty}: must hold one object of kind PodMachine; it holds 0 (it is empty)`,
    });
    const other = file('other.yaml', 'apiVersion: examples.basicoperator.dev/v1alpha1\nkind: PodMachine\n');
    await assert.rejects(readSample(other, target), {
      message: `--sample ${other}: its PodMachine has apiVersion "examples.basicoperator.dev/v1alpha1", not in the group infra.basicoperator.dev`,
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
