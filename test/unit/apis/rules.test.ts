import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  basicDeploymentNameFits,
  basicDeploymentRuleViolations,
  basicReplicaSetRuleViolations,
  MAX_BASIC_DEPLOYMENT_NAME,
  machineRuleViolations,
  mountPathsAreUnique,
  RULES,
  selectorIsNotEmpty,
  selectorMatchesLabels,
  surgeOrUnavailableNonZero,
  templateAnnotationsFit,
  volumeSizeIsPositive,
} from '../../../src/apis/index.ts';
import { basicDeployment, basicReplicaSet, edited, machine } from './fixtures.ts';

describe('selectorMatchesLabels', () => {
  const labels = { app: 'web', tier: 'front' };

  it('needs every matchLabels entry, with the same value', () => {
    assert.equal(selectorMatchesLabels({ matchLabels: { app: 'web' } }, labels), true);
    assert.equal(selectorMatchesLabels({ matchLabels: { app: 'web', tier: 'front' } }, labels), true);
    assert.equal(selectorMatchesLabels({ matchLabels: { app: 'api' } }, labels), false);
    assert.equal(selectorMatchesLabels({ matchLabels: { missing: 'x' } }, labels), false);
    assert.equal(selectorMatchesLabels({ matchLabels: { app: 'web' } }, undefined), false);
  });

  it('does not mistake inherited object properties for labels', () => {
    assert.equal(
      selectorMatchesLabels({ matchExpressions: [{ key: 'toString', operator: 'Exists' }] }, {}),
      false,
    );
  });

  it('evaluates In, NotIn, Exists and DoesNotExist', () => {
    const matches = (operator: string, key: string, values?: string[]) =>
      selectorMatchesLabels({ matchExpressions: [{ key, operator, ...(values ? { values } : {}) }] }, labels);
    assert.equal(matches('In', 'tier', ['front', 'back']), true);
    assert.equal(matches('In', 'tier', ['back']), false);
    assert.equal(matches('In', 'zone', ['a']), false);
    assert.equal(matches('NotIn', 'tier', ['back']), true);
    assert.equal(matches('NotIn', 'tier', ['front']), false);
    assert.equal(matches('NotIn', 'zone', ['a']), true);
    assert.equal(matches('Exists', 'app'), true);
    assert.equal(matches('Exists', 'zone'), false);
    assert.equal(matches('DoesNotExist', 'zone'), true);
    assert.equal(matches('DoesNotExist', 'app'), false);
  });

  it('ANDs matchLabels and matchExpressions', () => {
    const selector = {
      matchLabels: { app: 'web' },
      matchExpressions: [{ key: 'tier', operator: 'In', values: ['back'] }],
    };
    assert.equal(selectorMatchesLabels(selector, labels), false);
  });
});

describe('selectorIsNotEmpty', () => {
  it('needs a matchLabels entry or a requirement', () => {
    assert.equal(selectorIsNotEmpty({}), false);
    assert.equal(selectorIsNotEmpty({ matchLabels: {}, matchExpressions: [] }), false);
    assert.equal(selectorIsNotEmpty({ matchLabels: { a: 'b' } }), true);
    assert.equal(selectorIsNotEmpty({ matchExpressions: [{ key: 'a', operator: 'Exists' }] }), true);
  });
});

describe('surgeOrUnavailableNonZero', () => {
  it('rejects only both zero, as an integer or as 0%', () => {
    assert.equal(surgeOrUnavailableNonZero({ maxSurge: 0, maxUnavailable: 0 }), false);
    assert.equal(surgeOrUnavailableNonZero({ maxSurge: '0%', maxUnavailable: 0 }), false);
    assert.equal(surgeOrUnavailableNonZero({ maxSurge: '0%', maxUnavailable: '0%' }), false);
    assert.equal(surgeOrUnavailableNonZero({ maxSurge: 0, maxUnavailable: '1%' }), true);
    assert.equal(surgeOrUnavailableNonZero({ maxSurge: 1, maxUnavailable: 0 }), true);
  });

  it('treats a missing value as its 25% default', () => {
    assert.equal(surgeOrUnavailableNonZero({ maxSurge: 0 }), true);
    assert.equal(surgeOrUnavailableNonZero({ maxUnavailable: '0%' }), true);
    assert.equal(surgeOrUnavailableNonZero({}), true);
  });
});

describe('volumeSizeIsPositive', () => {
  it('accepts positive quantities and byte counts', () => {
    for (const size of ['1Gi', '500M', '1e9', '.5Gi', '1m', '0.1', 1])
      assert.equal(volumeSizeIsPositive(size), true, String(size));
  });
  it('rejects zero in any spelling', () => {
    for (const size of ['0', '0Gi', '0.0', '.0', '0e9', 0])
      assert.equal(volumeSizeIsPositive(size), false, String(size));
  });
});

describe('mountPathsAreUnique', () => {
  it('compares mount paths across volumes', () => {
    const volume = (name: string, mountPath: string) => ({ name, size: '1Gi', mountPath });
    assert.equal(mountPathsAreUnique([]), true);
    assert.equal(mountPathsAreUnique([volume('a', '/a'), volume('b', '/b')]), true);
    assert.equal(mountPathsAreUnique([volume('a', '/a'), volume('b', '/a')]), false);
  });
});

describe('rule violations of typed objects', () => {
  it('are empty for valid objects', () => {
    assert.deepEqual(basicDeploymentRuleViolations(basicDeployment()), []);
    assert.deepEqual(basicReplicaSetRuleViolations(basicReplicaSet()), []);
    assert.deepEqual(machineRuleViolations(machine()), []);
  });

  it('use the CEL messages, at the field the apiserver reports', () => {
    const deployment = edited(basicDeployment(), {
      'spec.selector': { matchExpressions: [{ key: 'tier', operator: 'DoesNotExist', values: ['x'] }] },
      'spec.strategy': { type: 'Recreate', rollingUpdate: { maxSurge: '0%', maxUnavailable: 0 } },
      'spec.progressDeadlineSeconds': 1,
      'spec.minReadySeconds': 5,
    });
    assert.deepEqual(basicDeploymentRuleViolations(deployment), [
      `spec.selector.matchExpressions[0]: ${RULES.selectorRequirementValues.message}`,
      `spec.selector: ${RULES.selectorMatchesTemplate.message}`,
      `spec.progressDeadlineSeconds: ${RULES.progressDeadlineExceedsMinReady.message}`,
      `spec.strategy.rollingUpdate: ${RULES.surgeOrUnavailableNonZero.message}`,
    ]);
    assert.deepEqual(basicReplicaSetRuleViolations(edited(basicReplicaSet(), { 'spec.selector': {} })), [
      `spec.selector: ${RULES.selectorNotEmpty.message}`,
    ]);
  });

  it("refuse the operator's pod marker label in a template or a selector", () => {
    const marker = 'apps.basicoperator.dev/replicaset-pod';
    const inTemplate = basicReplicaSet();
    inTemplate.spec.template.metadata!.labels![marker] = 'true';
    assert.deepEqual(basicReplicaSetRuleViolations(inTemplate), [
      `spec.template.metadata.labels: ${RULES.templateLabelNotReserved.message}`,
    ]);
    const notExists = edited(basicDeployment(), {
      'spec.selector': {
        matchLabels: { app: 'web' },
        matchExpressions: [{ key: marker, operator: 'DoesNotExist' }],
      },
    });
    assert.deepEqual(basicDeploymentRuleViolations(notExists), [
      `spec.selector: ${RULES.selectorKeyNotReserved.message}`,
    ]);
    assert.match(
      RULES.templateLabelNotReserved.message,
      /apps\.basicoperator\.dev\/replicaset-pod is reserved/,
    );
  });
});

describe('bounds the schema cannot check alone', () => {
  it('a BasicDeployment name leaves room for "-<pod-template-hash>" within 253 characters', () => {
    assert.equal(MAX_BASIC_DEPLOYMENT_NAME, 242);
    assert.equal(basicDeploymentNameFits('a'.repeat(242)), true);
    assert.equal(basicDeploymentNameFits('a'.repeat(243)), false);
    const long = edited(basicDeployment(), { 'metadata.name': 'a'.repeat(243) });
    assert.deepEqual(basicDeploymentRuleViolations(long), [
      `metadata.name: ${RULES.basicDeploymentNameLength.message}`,
    ]);
    assert.match(RULES.basicDeploymentNameLength.rule, /self\.metadata\.name\.size\(\) <= 242/);
    // Checked on create only: a name never changes, and one stored before the rule keeps its status.
    assert.match(RULES.basicDeploymentNameLength.rule, /^oldSelf\.hasValue\(\) \|\| /);
    assert.equal(RULES.basicDeploymentNameLength.optionalOldSelf, true);
  });

  it("template annotations total at most core/v1's 256 KiB, counted in characters as CEL counts them", () => {
    const limit = 256 * 1024;
    assert.equal(templateAnnotationsFit(undefined), true);
    assert.equal(templateAnnotationsFit({ a: 'x'.repeat(limit - 1) }), true);
    assert.equal(templateAnnotationsFit({ a: 'x'.repeat(limit) }), false);
    // Characters, not UTF-16 units or bytes.
    assert.equal(templateAnnotationsFit({ a: '😀'.repeat(limit - 1) }), true);
    const half = 'x'.repeat(limit / 2);
    assert.equal(templateAnnotationsFit({ a: half, b: half }), false);
    const big = edited(basicReplicaSet(), { 'spec.template.metadata.annotations': { a: half, b: half } });
    assert.deepEqual(basicReplicaSetRuleViolations(big), [
      `spec.template.metadata.annotations: ${RULES.templateAnnotationsSize.message}`,
    ]);
  });

  it("a frozen spec (the cache's) is checked once, and its violations are the caller's to extend", () => {
    let reads = 0;
    const set = basicReplicaSet();
    const template = set.spec.template;
    const spec = { ...set.spec };
    Object.defineProperty(spec, 'template', {
      enumerable: true,
      get: () => {
        reads++;
        return template;
      },
    });
    const frozen = { ...set, spec: Object.freeze(spec) };
    frozen.spec.template.metadata!.labels!['apps.basicoperator.dev/replicaset-pod'] = 'true';
    const first = basicReplicaSetRuleViolations(frozen);
    const afterFirst = reads;
    first.push('changed by the caller');
    assert.deepEqual(basicReplicaSetRuleViolations(frozen), [
      `spec.template.metadata.labels: ${RULES.templateLabelNotReserved.message}`,
    ]);
    assert.equal(reads, afterFirst);
  });

  it('a template nested deeper than any pod template is refused alone, before anything walks it', () => {
    let nested: unknown = 'x';
    for (let i = 0; i < 10_000; i++) nested = { a: nested };
    const deep = edited(basicDeployment(), { 'spec.template.spec.containers.0.x': nested });
    const [violation, ...rest] = basicDeploymentRuleViolations(deep);
    assert.match(violation ?? '', /^spec\.template: nested more than 100 levels deep/);
    assert.deepEqual(rest, []);
    const deepSet = edited(basicReplicaSet(), { 'spec.template.spec.x': nested });
    assert.equal(basicReplicaSetRuleViolations(deepSet).length, 1);
  });
});
