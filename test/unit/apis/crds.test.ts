import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  basicDeploymentCrd,
  basicReplicaSetCrd,
  CUSTOM_RESOURCE_DEFINITIONS,
  type CustomResourceDefinition,
  type JsonSchemaProps,
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  machineCrd,
  RULES,
  type ValidationRule,
  volumeBackupCrd,
} from '../../../src/apis/index.ts';
import { selectorToString } from '../../../src/runtime/labels.ts';

interface SchemaNode {
  path: string;
  schema: JsonSchemaProps;
}

function nodes(schema: JsonSchemaProps, path = ''): SchemaNode[] {
  const children: SchemaNode[] = [];
  for (const [name, child] of Object.entries(schema.properties ?? {}))
    children.push(...nodes(child, `${path}.${name}`));
  if (schema.items) children.push(...nodes(schema.items, `${path}[*]`));
  if (schema.additionalProperties) children.push(...nodes(schema.additionalProperties, `${path}[*]`));
  return [{ path: path || '<root>', schema }, ...children];
}

const schemaOf = (crd: CustomResourceDefinition): JsonSchemaProps => {
  const [version] = crd.spec.versions;
  assert.ok(version);
  return version.schema.openAPIV3Schema;
};

function nodeAt(crd: CustomResourceDefinition, path: string): JsonSchemaProps {
  const found = nodes(schemaOf(crd)).find((node) => node.path === path);
  assert.ok(found, `no schema node at ${path}`);
  return found.schema;
}

const INT_OR_STRING_ANY_OF = [{ type: 'integer' }, { type: 'string' }];

for (const crd of CUSTOM_RESOURCE_DEFINITIONS) {
  describe(`CRD ${crd.metadata.name}`, () => {
    const all = nodes(schemaOf(crd));

    it('is named <plural>.<group>, namespaced, in category basic, labelled managed-by', () => {
      assert.equal(crd.metadata.name, `${crd.spec.names.plural}.${crd.spec.group}`);
      assert.equal(crd.spec.scope, 'Namespaced');
      assert.deepEqual(crd.spec.names.categories, ['basic']);
      assert.equal(crd.spec.names.listKind, `${crd.spec.names.kind}List`);
      assert.equal(crd.metadata.labels?.[MANAGED_BY_LABEL], MANAGED_BY_VALUE);
    });

    it('has one version, v1alpha1, served and stored, with a status subresource and an Age column', () => {
      assert.equal(crd.spec.versions.length, 1);
      const [version] = crd.spec.versions;
      assert.ok(version);
      assert.equal(version.name, 'v1alpha1');
      assert.equal(version.served, true);
      assert.equal(version.storage, true);
      assert.deepEqual(version.subresources.status, {});
      assert.deepEqual(version.additionalPrinterColumns?.at(-1), {
        name: 'Age',
        type: 'date',
        jsonPath: '.metadata.creationTimestamp',
      });
    });

    it('is structural: every node has a type, or is int-or-string', () => {
      for (const { path, schema } of all) {
        if (schema['x-kubernetes-int-or-string']) {
          assert.equal(schema.type, undefined, `${path}: int-or-string must not set type`);
          assert.deepEqual(schema.anyOf ?? INT_OR_STRING_ANY_OF, INT_OR_STRING_ANY_OF, path);
        } else {
          assert.ok(schema.type, `${path} has no type`);
          assert.equal(schema.anyOf, undefined, `${path}: anyOf is only for int-or-string`);
        }
      }
    });

    it('does not prune what it means to keep: objects have properties, a value schema, or preserve unknown fields', () => {
      for (const { path, schema } of all) {
        if (schema.type === 'array') assert.ok(schema.items, `${path}: array without items`);
        if (schema.type !== 'object') continue;
        assert.ok(
          !(schema.properties && schema.additionalProperties),
          `${path}: properties and additionalProperties`,
        );
        const keeps =
          schema.properties || schema.additionalProperties || schema['x-kubernetes-preserve-unknown-fields'];
        assert.ok(keeps || path === '.metadata', `${path}: an object whose fields would all be pruned`);
        for (const name of schema.required ?? []) {
          assert.ok(schema.properties?.[name], `${path}: required field ${name} is not declared`);
        }
      }
    });

    it('describes only a bare metadata object at the root', () => {
      assert.deepEqual(nodeAt(crd, '.metadata'), { type: 'object' });
      assert.deepEqual(schemaOf(crd).required, ['spec']);
    });

    it('keys list-maps by required scalar fields of object items', () => {
      for (const { path, schema } of all) {
        if (schema['x-kubernetes-list-type'] !== 'map') continue;
        const keys = schema['x-kubernetes-list-map-keys'] ?? [];
        assert.ok(keys.length > 0, `${path}: list-map without keys`);
        assert.equal(schema.items?.type, 'object', path);
        for (const key of keys) {
          assert.equal(schema.items?.properties?.[key]?.type, 'string', `${path}: key ${key}`);
          assert.ok(schema.items?.required?.includes(key), `${path}: key ${key} must be required`);
        }
      }
    });

    it('takes every CEL rule from RULES, each with a message', () => {
      const ruleObjects = new Set<ValidationRule>(Object.values(RULES));
      for (const { path, schema } of all) {
        for (const rule of schema['x-kubernetes-validations'] ?? []) {
          assert.ok(ruleObjects.has(rule), `${path}: rule not from RULES: ${rule.rule}`);
          assert.ok(rule.message.length > 0, `${path}: rule without message`);
        }
      }
    });

    it('bounds every string, list and map a user or controller writes (docs/api.md#bounds)', () => {
      for (const { path, schema } of all) {
        const isString = schema.type === 'string' || schema['x-kubernetes-int-or-string'] === true;
        if (isString && schema.enum === undefined && schema.format !== 'date-time') {
          assert.ok(schema.maxLength, `${path}: a string without maxLength`);
        }
        if (schema.type === 'array') assert.ok(schema.maxItems, `${path}: a list without maxItems`);
        if (schema.additionalProperties)
          assert.ok(schema.maxProperties, `${path}: a map without maxProperties`);
      }
    });

    it('declares conditions as metav1.Condition, a list-map keyed by type', () => {
      const conditions = nodeAt(crd, '.status.conditions');
      assert.equal(conditions['x-kubernetes-list-type'], 'map');
      assert.deepEqual(conditions['x-kubernetes-list-map-keys'], ['type']);
      const item = conditions.items;
      assert.deepEqual(item?.required, ['type', 'status', 'lastTransitionTime', 'reason', 'message']);
      assert.deepEqual(item?.properties?.status?.enum, ['True', 'False', 'Unknown']);
      assert.equal(item?.properties?.lastTransitionTime?.format, 'date-time');
      assert.equal(item?.properties?.observedGeneration?.type, 'integer');
    });
  });
}

describe('CRD details', () => {
  it('every rule in RULES is used by some CRD', () => {
    const used = new Set<ValidationRule>();
    for (const crd of CUSTOM_RESOURCE_DEFINITIONS) {
      for (const { schema } of nodes(schemaOf(crd))) {
        for (const rule of schema['x-kubernetes-validations'] ?? []) used.add(rule);
      }
    }
    for (const [id, rule] of Object.entries(RULES)) assert.ok(used.has(rule), `RULES.${id} is unused`);
  });

  // The tables below hold what was decided for each kind there is; a kind added since has no row,
  // and is held by what every kind must be. A row of a kind that is gone fails.
  const kindOf = (crd: CustomResourceDefinition) => crd.spec.names.kind;

  it('names and short names', () => {
    const NAMES = [
      ['BasicDeployment', 'basicdeployments', ['bdeploy', 'bd']],
      ['BasicReplicaSet', 'basicreplicasets', ['brs']],
      ['Machine', 'machines', undefined],
      ['PodMachine', 'podmachines', undefined],
      ['VolumeBackup', 'volumebackups', ['vb']],
    ];
    const named = CUSTOM_RESOURCE_DEFINITIONS.map((crd) => [
      crd.spec.names.kind,
      crd.spec.names.plural,
      crd.spec.names.shortNames,
    ]);
    // These kinds, in this order, with these names.
    assert.deepEqual(
      named.filter(([kind]) => NAMES.some(([k]) => k === kind)),
      NAMES,
    );
    // Every kind: lower-case names of its own, which no other kind's name or short name shadows.
    const taken = new Set<string>();
    for (const crd of CUSTOM_RESOURCE_DEFINITIONS) {
      const { kind, plural, singular, shortNames = [] } = crd.spec.names;
      assert.equal(singular, kind.toLowerCase(), kind);
      for (const name of [plural, singular, ...shortNames]) {
        assert.match(name, /^[a-z][a-z0-9]*$/, kind);
        assert.ok(!taken.has(name), `${kind}: ${name} names another kind too`);
        taken.add(name);
      }
    }
  });

  it('scale subresource on the workloads only', () => {
    const SCALES: Readonly<Record<string, boolean>> = {
      BasicDeployment: true,
      BasicReplicaSet: true,
      Machine: false,
      PodMachine: false,
      VolumeBackup: false,
    };
    const kinds = CUSTOM_RESOURCE_DEFINITIONS.map(kindOf);
    for (const kind of Object.keys(SCALES)) assert.ok(kinds.includes(kind), `no CRD of ${kind}`);
    const scale = {
      specReplicasPath: '.spec.replicas',
      statusReplicasPath: '.status.replicas',
      labelSelectorPath: '.status.selector',
    };
    for (const crd of CUSTOM_RESOURCE_DEFINITIONS) {
      const found = crd.spec.versions[0]?.subresources.scale;
      const scales = SCALES[kindOf(crd)];
      if (scales !== undefined) assert.equal(found !== undefined, scales, kindOf(crd));
      // Every kind that scales, as a workload does: replicas in spec and status, its selector in status.
      if (found !== undefined) assert.deepEqual(found, scale, kindOf(crd));
    }
  });

  it('printer columns', () => {
    const COLUMNS: Readonly<Record<string, readonly string[]>> = {
      BasicDeployment: [
        'Desired=.spec.replicas:integer',
        'Current=.status.replicas:integer',
        'Ready=.status.readyReplicas:integer',
        'Up-To-Date=.status.updatedReplicas:integer',
        'Available=.status.availableReplicas:integer',
        'Age=.metadata.creationTimestamp:date',
      ],
      BasicReplicaSet: [
        'Desired=.spec.replicas:integer',
        'Current=.status.replicas:integer',
        'Ready=.status.readyReplicas:integer',
        'Available=.status.availableReplicas:integer',
        'Age=.metadata.creationTimestamp:date',
      ],
      Machine: [
        'Phase=.status.phase:string',
        'Provider=.status.infrastructureRef.kind:string',
        'Infrastructure=.status.conditions[?(@.type=="InfrastructureReady")].status:string',
        'Ready=.status.ready:boolean',
        'Age=.metadata.creationTimestamp:date',
      ],
      PodMachine: [
        'Phase=.status.phase:string',
        'Ready=.status.ready:boolean',
        'Age=.metadata.creationTimestamp:date',
      ],
      VolumeBackup: [
        'Machine=.spec.machineName:string',
        'Phase=.status.phase:string',
        'Attempts=.status.attempts:integer',
        'Age=.metadata.creationTimestamp:date',
      ],
    };
    const kinds = CUSTOM_RESOURCE_DEFINITIONS.map(kindOf);
    for (const kind of Object.keys(COLUMNS)) assert.ok(kinds.includes(kind), `no CRD of ${kind}`);
    for (const crd of CUSTOM_RESOURCE_DEFINITIONS) {
      const columns = crd.spec.versions[0]?.additionalPrinterColumns ?? [];
      const expected = COLUMNS[kindOf(crd)];
      if (expected) {
        assert.deepEqual(
          columns.map((column) => `${column.name}=${column.jsonPath}:${column.type}`),
          expected,
        );
      }
      // Every kind: columns of distinct names, each a field of the object of a type kubectl prints.
      const names = columns.map((column) => column.name);
      assert.deepEqual([...new Set(names)], names, kindOf(crd));
      for (const column of columns) {
        assert.match(column.jsonPath, /^\.(spec|status|metadata)\./, `${kindOf(crd)}: ${column.name}`);
        assert.ok(
          ['integer', 'number', 'string', 'boolean', 'date'].includes(column.type),
          `${kindOf(crd)}: ${column.name}`,
        );
      }
    }
  });

  it('BasicDeployment defaults, including a whole strategy because nested defaults need a parent', () => {
    const defaults = Object.fromEntries(
      nodes(schemaOf(basicDeploymentCrd))
        .filter(({ schema }) => schema.default !== undefined)
        .map(({ path, schema }) => [path, schema.default]),
    );
    assert.deepEqual(defaults, {
      '.spec.replicas': 1,
      '.spec.strategy': { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
      '.spec.strategy.type': 'RollingUpdate',
      '.spec.strategy.rollingUpdate.maxSurge': '25%',
      '.spec.strategy.rollingUpdate.maxUnavailable': '25%',
      '.spec.minReadySeconds': 0,
      '.spec.revisionHistoryLimit': 10,
      '.spec.progressDeadlineSeconds': 600,
      '.spec.paused': false,
    });
    assert.equal(
      nodeAt(basicDeploymentCrd, '.spec.strategy.rollingUpdate').default,
      undefined,
      'Recreate forbids it',
    );
    assert.equal(nodeAt(basicReplicaSetCrd, '.spec.replicas').default, 1);
    assert.equal(nodeAt(basicReplicaSetCrd, '.spec.minReadySeconds').default, 0);
  });

  it('Machine backup policy defaults to OnDelete, with or without a backup object', () => {
    assert.deepEqual(nodeAt(machineCrd, '.spec.backup').default, { policy: 'OnDelete' });
    assert.equal(nodeAt(machineCrd, '.spec.backup.policy').default, 'OnDelete');
    assert.deepEqual(nodeAt(machineCrd, '.spec.backup.policy').enum, ['OnDelete', 'None']);
  });

  it('status phases are enums', () => {
    assert.deepEqual(nodeAt(machineCrd, '.status.phase').enum, [
      'Pending',
      'Provisioning',
      'Running',
      'Stopping',
      'Stopped',
      'Failed',
    ]);
    assert.deepEqual(nodeAt(volumeBackupCrd, '.status.phase').enum, [
      'Pending',
      'Running',
      'Completed',
      'Failed',
    ]);
  });

  it('bounds every map, list and string that a CEL rule iterates over, to pass the cost estimate', () => {
    for (const crd of [basicDeploymentCrd, basicReplicaSetCrd]) {
      assert.ok(nodeAt(crd, '.spec.selector.matchLabels').maxProperties);
      assert.ok(nodeAt(crd, '.spec.selector.matchLabels[*]').maxLength);
      assert.ok(nodeAt(crd, '.spec.selector.matchExpressions').maxItems);
      assert.ok(nodeAt(crd, '.spec.selector.matchExpressions[*].values').maxItems);
      assert.ok(nodeAt(crd, '.spec.template.metadata.labels').maxProperties);
    }
    assert.ok(nodeAt(machineCrd, '.spec.volumes').maxItems);
    assert.ok(nodeAt(machineCrd, '.spec.volumes[*].mountPath').maxLength);
    assert.ok(nodeAt(machineCrd, '.spec.volumes[*].size').maxLength);
  });

  it("gives a BasicReplicaSet room for one label more than its BasicDeployment's: the pod-template-hash", () => {
    for (const path of ['.spec.selector.matchLabels', '.spec.template.metadata.labels']) {
      const deployment = nodeAt(basicDeploymentCrd, path).maxProperties ?? 0;
      assert.equal(nodeAt(basicReplicaSetCrd, path).maxProperties, deployment + 1, path);
    }
  });

  it('holds status.selector to a length the largest selector the spec allows fits in', () => {
    const matchLabels = nodeAt(basicReplicaSetCrd, '.spec.selector.matchLabels');
    const requirement = nodeAt(basicReplicaSetCrd, '.spec.selector.matchExpressions[*]');
    const value = (i: number, length: number) => `${i}`.padEnd(length, 'v');
    const key = (i: number) => `${'k'.repeat(253)}/${value(i, 63)}`;
    const largest = {
      matchLabels: Object.fromEntries(
        Array.from({ length: matchLabels.maxProperties ?? 0 }, (_, i) => [key(i), value(i, 63)]),
      ),
      matchExpressions: Array.from(
        { length: nodeAt(basicReplicaSetCrd, '.spec.selector.matchExpressions').maxItems ?? 0 },
        (_, i) => ({
          key: key(i),
          operator: 'NotIn',
          values: Array.from({ length: requirement.properties?.values?.maxItems ?? 0 }, (_, j) =>
            value(j, 63),
          ),
        }),
      ),
    };
    const text = selectorToString(largest);
    assert.ok(text.length > 150_000, `${text.length}`);
    for (const crd of [basicDeploymentCrd, basicReplicaSetCrd]) {
      assert.ok(text.length <= (nodeAt(crd, '.status.selector').maxLength ?? 0));
    }
  });

  it('refuses at admission a BasicDeployment whose sets could not be named, and bounds template annotations', () => {
    assert.deepEqual(schemaOf(basicDeploymentCrd)['x-kubernetes-validations'], [
      RULES.basicDeploymentNameLength,
    ]);
    for (const crd of [basicDeploymentCrd, basicReplicaSetCrd]) {
      assert.deepEqual(nodeAt(crd, '.spec.template.metadata.annotations')['x-kubernetes-validations'], [
        RULES.templateAnnotationsSize,
      ]);
    }
  });

  it('checks the type of int-or-string values in CEL, where they are dyn', () => {
    assert.match(RULES.surgeOrUnavailableNonZero.rule, /type\(self\.maxSurge\) == int/);
    assert.match(RULES.surgeOrUnavailableNonZero.rule, /type\(self\.maxUnavailable\) == int/);
    assert.match(RULES.machineVolumeSizePositive.rule, /^type\(self\) == int/);
  });

  it('makes selectors, Machine volumes and VolumeBackup specs immutable with transition rules', () => {
    for (const crd of [basicDeploymentCrd, basicReplicaSetCrd]) {
      assert.ok(nodeAt(crd, '.spec.selector')['x-kubernetes-validations']?.includes(RULES.selectorImmutable));
    }
    assert.ok(
      nodeAt(machineCrd, '.spec')['x-kubernetes-validations']?.includes(RULES.machineVolumesImmutable),
    );
    assert.ok(
      nodeAt(volumeBackupCrd, '.spec')['x-kubernetes-validations']?.includes(RULES.volumeBackupSpecImmutable),
    );
    // A VolumeBackup copies at least one volume, and names a Machine by name and uid or not at all.
    assert.equal(nodeAt(volumeBackupCrd, '.spec.volumes').minItems, 1);
    assert.ok(
      nodeAt(volumeBackupCrd, '.spec')['x-kubernetes-validations']?.includes(
        RULES.volumeBackupMachineComplete,
      ),
    );
    for (const rule of [
      RULES.selectorImmutable,
      RULES.machineVolumesImmutable,
      RULES.volumeBackupSpecImmutable,
    ]) {
      assert.match(rule.rule, /oldSelf/);
    }
  });

  it('keeps the pod template spec, requiring named containers with images', () => {
    const podSpec = nodeAt(basicDeploymentCrd, '.spec.template.spec');
    assert.equal(podSpec['x-kubernetes-preserve-unknown-fields'], true);
    assert.deepEqual(podSpec.required, ['containers']);
    const container = nodeAt(basicDeploymentCrd, '.spec.template.spec.containers[*]');
    assert.deepEqual(container.required, ['name', 'image']);
    assert.equal(container['x-kubernetes-preserve-unknown-fields'], true);
  });
});
