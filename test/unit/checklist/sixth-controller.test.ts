// The checklist of docs/runtime.md ("Adding a kind and a controller"), followed for a sixth
// controller: test/fixtures/sixth-controller/ adds the kind Greeting and the controller greeting,
// file by file as the checklist says (checklist.ts). Here the controller runs on the operator's
// Manager and builder, the generators take it in, and the checklist is held to the fixture.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { waitFor } from '../../../e2e/support/wait.ts';
import {
  AGGREGATE_ROLES_FILE,
  CHART_RULES_FILE,
  CLI_KINDS_FILE,
  ROLE_FILE,
  renderControllerFiles,
  VALUES_SCHEMA_FILE,
} from '../../../scripts/generate-controllers.ts';
import { renderCrdFiles } from '../../../scripts/generate-crds.ts';
import * as operatorApis from '../../../src/apis/index.ts';
import { CONTROLLERS as OPERATOR_CONTROLLERS } from '../../../src/controllers/index.ts';
import { controllerRefOf } from '../../../src/runtime/client/object.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';
import { findCondition, READY } from '../../../src/runtime/write/conditions.ts';
import { CUSTOM_RESOURCE_DEFINITIONS } from '../../fixtures/sixth-controller/apis/crds.ts';
import * as greetingApis from '../../fixtures/sixth-controller/apis/index.ts';
import { GREETING, type Greeting } from '../../fixtures/sixth-controller/apis/index.ts';
import { STEPS } from '../../fixtures/sixth-controller/checklist.ts';
import { greetingDeclaration } from '../../fixtures/sixth-controller/controllers/greeting/declaration.ts';
import { CONTROLLERS } from '../../fixtures/sixth-controller/controllers/index.ts';
import { FakeCluster } from '../../support/fake/cluster.ts';
import { FakeClusterManager } from '../../support/fake/manager.ts';
import { MemoryEventRecorder } from '../../support/memory-event-recorder.ts';
import { OPERATOR_DEFAULTS } from '../../support/operator-options.ts';

const ROOT = new URL('../../../', import.meta.url);
const FIXTURE = new URL('../../fixtures/sixth-controller/', import.meta.url);

function greeting(name: string, message: string): Greeting {
  return {
    apiVersion: GREETING.apiVersion,
    kind: GREETING.kind,
    metadata: { name, namespace: 'ns' },
    spec: { message },
  };
}

describe('the sixth controller, registered from its declaration with the Manager on a FakeCluster', () => {
  it('keeps each Greeting in a ConfigMap it controls, reports Ready, and follows a new message', async () => {
    const cluster = new FakeCluster();
    cluster.seed(GREETING, greeting('hello', 'Hello'), greeting('taken', 'Hi'));
    cluster.seed(CoreTypes.ConfigMap, { metadata: { name: 'taken-greeting', namespace: 'ns' } });
    const events = new MemoryEventRecorder();
    const manager = new FakeClusterManager(cluster, events);
    greetingDeclaration.register(manager, OPERATOR_DEFAULTS);
    assert.deepEqual(
      manager.controllers.map((c) => c.name),
      ['greeting'],
    );
    const ready = (name: string) =>
      findCondition(cluster.server.get(GREETING, 'ns', name).status?.conditions, READY);
    const message = () => cluster.server.get<V1ConfigMap>(CoreTypes.ConfigMap, 'ns', 'hello-greeting').data;
    await manager.runControllers();
    try {
      const options = { timeoutMs: 5000, intervalMs: 5 };
      await waitFor('hello Ready', () => ready('hello')?.status === 'True', options);
      assert.deepEqual(message(), { message: 'Hello' });
      const configMap = cluster.server.get<V1ConfigMap>(CoreTypes.ConfigMap, 'ns', 'hello-greeting');
      assert.equal(controllerRefOf(configMap)?.name, 'hello');
      await waitFor('taken not Ready', () => ready('taken')?.reason === 'NameTaken', options);
      assert.deepEqual(
        events.events.map((e) => `${e.regarding.metadata?.name} ${e.reason}`),
        ['hello Created'],
      );

      await cluster.sync();
      cluster.server.patch(GREETING, {
        namespace: 'ns',
        name: 'hello',
        patchType: 'merge',
        body: { spec: { message: 'Hello again' } },
      });
      await cluster.sync();
      await waitFor('the new message', () => message()?.message === 'Hello again', options);
      await waitFor('its generation observed', () => ready('hello')?.observedGeneration === 2, options);
    } finally {
      await manager.stopControllers();
    }
  });
});

/** A file of the checklist, named for Greeting: `<group>`, `foos` and `foo` filled in. */
function forGreeting(file: string): string {
  return file
    .replaceAll('<group>', GREETING.group)
    .replaceAll('foos', GREETING.plural)
    .replaceAll('foo', GREETING.singular);
}

describe('npm run generate, with the sixth controller declared', () => {
  const api = { crds: CUSTOM_RESOURCE_DEFINITIONS, exports: { ...operatorApis, ...greetingApis } };
  const before: Record<string, string> = { ...renderCrdFiles(), ...renderControllerFiles() };
  const after: Record<string, string> = {
    ...renderCrdFiles(CUSTOM_RESOURCE_DEFINITIONS),
    ...renderControllerFiles(CONTROLLERS, api),
  };

  it('writes the generated files of the checklist, and changes no other', () => {
    const changed = Object.keys(after).filter((path) => after[path] !== before[path]);
    const generated = STEPS.filter((s) => s.by === 'generate').map((s) => forGreeting(s.file));
    assert.deepEqual(changed.sort(), generated.sort());
  });

  it('grants the controller what it declares, users its kind, gives kubectl basic the kind, and the chart its workers', () => {
    for (const file of [ROLE_FILE, CHART_RULES_FILE]) {
      assert.match(after[file] ?? '', /resources: \["greetings\/status"\]\n\s*verbs: \["patch"\]/, file);
      assert.match(after[file] ?? '', /resources: \["configmaps", "persistentvolumeclaims"\]/, file);
    }
    for (const file of [AGGREGATE_ROLES_FILE, CHART_RULES_FILE]) {
      assert.match(after[file] ?? '', /apiGroups: \["example\.basicoperator\.dev"\]/, file);
    }
    assert.match(after[CLI_KINDS_FILE] ?? '', /\| 'Greeting';/);
    assert.match(after[CLI_KINDS_FILE] ?? '', /GREETING,\n\] as const;/);
    assert.match(
      after[VALUES_SCHEMA_FILE] ?? '',
      /\n {8}"greeting": \{ "\$ref": "#\/definitions\/workers" \},\n/,
    );
  });

  it('leaves a kind whose CRD is not listed out of the aggregated roles and kubectl basic', () => {
    const withoutCrd = renderControllerFiles(CONTROLLERS, {
      ...api,
      crds: operatorApis.CUSTOM_RESOURCE_DEFINITIONS,
    });
    assert.equal(withoutCrd[AGGREGATE_ROLES_FILE], before[AGGREGATE_ROLES_FILE]);
    assert.equal(withoutCrd[CLI_KINDS_FILE], before[CLI_KINDS_FILE]);
  });

  it('fails, naming the kind, when its resource is not exported', () => {
    assert.throws(
      () => renderControllerFiles(CONTROLLERS, { ...api, exports: operatorApis }),
      /Greeting: not a resource exported by src\/apis\/index\.ts/,
    );
  });
});

/** The numbered list of docs/runtime.md's "Adding a kind and a controller", and what follows it. */
function checklist(): { list: string; after: string } {
  const doc = readFileSync(new URL('docs/runtime.md', ROOT), 'utf8');
  const section = doc.slice(doc.indexOf('### Adding a kind and a controller'));
  const list = section.match(/\n(1\. [\s\S]*?)\n\n/)?.[1] ?? '';
  return { list, after: section.slice(section.indexOf(list) + list.length) };
}

describe("docs/runtime.md's checklist", () => {
  const { list, after } = checklist();

  it("names the files of the fixture's steps, and no other", () => {
    const named = new Set([...list.matchAll(/`([^`\s]+\/[^`\s]+\.(?:ts|yaml|json|tpl))`/g)].map((m) => m[1]));
    assert.deepEqual([...named].sort(), STEPS.map((s) => s.file).sort());
  });

  it('counts them', () => {
    const hand = STEPS.filter((s) => s.by === 'hand').length;
    const generated = STEPS.length - hand;
    assert.match(
      after,
      new RegExp(`That is ${hand} files by hand and ${generated} generated \\(${STEPS.length}\\)`),
    );
  });

  it('is what the fixture does, file by file', () => {
    for (const step of STEPS) {
      if (step.fixture)
        assert.ok(existsSync(new URL(step.fixture, FIXTURE)), `${step.file}: ${step.fixture}`);
    }
  });

  it('keeps by hand no list of every controller or kind but the two the generators read', () => {
    // By hand: the kind's and the controller's own files, and the lists of src/apis/crds.ts and
    // src/controllers/index.ts, each played by a file of the fixture. The other lists are generated.
    assert.deepEqual(
      STEPS.filter((s) => s.by === 'hand' && !s.fixture),
      [],
    );
    const lists = STEPS.filter((s) => s.by === 'generate' && !s.file.includes('foo'));
    assert.ok(lists.length > 0);
    for (const { file } of lists) {
      const text = readFileSync(new URL(file, ROOT), 'utf8');
      if (file.endsWith('.json')) {
        for (const { name } of OPERATOR_CONTROLLERS)
          assert.ok(text.includes(`"${name}"`), `${file}: ${name}`);
        continue;
      }
      for (const crd of operatorApis.CUSTOM_RESOURCE_DEFINITIONS) {
        const { kind, plural } = crd.spec.names;
        assert.ok(text.includes(kind) || text.includes(plural), `${file}: ${kind}`);
      }
    }
  });
});
