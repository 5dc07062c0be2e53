// The checks of a provider's CustomResourceDefinition (pure: given the CRD).
import type { V1CustomResourceDefinition } from '@kubernetes/client-node';
import { CONTRACT_LABEL, contractVersions } from '../../src/apis/infra/contract/index.ts';
import { resourceOf } from '../../src/runtime/client/resource.ts';
import type { KindAndGroup } from './args.ts';
import { type CheckResult, fail, pass } from './report.ts';

export const CRD_TYPE = resourceOf<V1CustomResourceDefinition>()({
  group: 'apiextensions.k8s.io',
  version: 'v1',
  kind: 'CustomResourceDefinition',
  plural: 'customresourcedefinitions',
  namespaced: false,
});

/** The CRD of `target` among `crds`, or a failure that says what the group holds instead. */
export function checkCrdFound(
  crds: readonly V1CustomResourceDefinition[],
  target: KindAndGroup,
): { result: CheckResult; crd?: V1CustomResourceDefinition } {
  const crd = crds.find((c) => c.spec.group === target.group && c.spec.names.kind === target.kind);
  if (!crd) {
    const inGroup = crds.filter((c) => c.spec.group === target.group).map((c) => c.spec.names.kind);
    const others = inGroup.length ? `; the group has: ${inGroup.sort().join(', ')}` : '; the group has none';
    return {
      result: fail(
        'crd-found',
        `no CustomResourceDefinition has group ${target.group} and kind ${target.kind}${others}`,
      ),
    };
  }
  const name = crd.metadata?.name ?? '';
  const established = crd.status?.conditions?.find((c) => c.type === 'Established');
  if (established?.status !== 'True') {
    return {
      result: fail(
        'crd-found',
        `CRD ${name} is not established (Established=${established?.status ?? 'absent'}${established?.message ? `: ${established.message}` : ''})`,
      ),
    };
  }
  return { result: pass('crd-found', `CRD ${name}`), crd };
}

export function checkNamespaced(crd: V1CustomResourceDefinition): CheckResult {
  return crd.spec.scope === 'Namespaced'
    ? pass('crd-namespaced', 'scope Namespaced')
    : fail(
        'crd-namespaced',
        `scope is ${crd.spec.scope}: a provider object must live in its Machine's namespace (scope Namespaced)`,
      );
}

/**
 * The version the kit tests: `requested` if given and served; else the first served version the
 * contract label lists; else (so a CRD without the label is still tested) the storage version.
 */
export function chooseVersion(
  crd: V1CustomResourceDefinition,
  requested: string | undefined,
): { version: string } | { problem: string } {
  const served = crd.spec.versions.filter((v) => v.served).map((v) => v.name);
  if (requested !== undefined) {
    return served.includes(requested)
      ? { version: requested }
      : {
          problem: `CRD ${crd.metadata?.name} does not serve version ${requested} (it serves: ${served.join(', ') || 'none'})`,
        };
  }
  const declared = contractVersions(crd.metadata?.labels).find((v) => served.includes(v));
  const storage = crd.spec.versions.find((v) => v.storage && v.served)?.name;
  const version = declared ?? storage ?? served[0];
  return version ? { version } : { problem: `CRD ${crd.metadata?.name} serves no version` };
}

export function checkStatusSubresource(crd: V1CustomResourceDefinition, version: string): CheckResult {
  const entry = crd.spec.versions.find((v) => v.name === version);
  return entry?.subresources?.status !== undefined
    ? pass('crd-status-subresource', `version ${version} has subresources.status`)
    : fail(
        'crd-status-subresource',
        `version ${version} has no status subresource (spec.versions[name=${version}].subresources.status): the provider must write its status through it`,
      );
}

export function checkContractLabel(crd: V1CustomResourceDefinition, version: string): CheckResult {
  const name = crd.metadata?.name ?? '';
  const value = crd.metadata?.labels?.[CONTRACT_LABEL];
  if (value === undefined) {
    return fail(
      'crd-contract-label',
      `CRD ${name} has no label ${CONTRACT_LABEL} (it must list the versions that implement contract v1, e.g. ${CONTRACT_LABEL}: ${version}); a Machine referring to this kind gets ContractNotDeclared`,
    );
  }
  const listed = contractVersions(crd.metadata?.labels);
  const served = crd.spec.versions.filter((v) => v.served).map((v) => v.name);
  const label = `${CONTRACT_LABEL}=${JSON.stringify(value)}`;
  if (!listed.some((v) => served.includes(v))) {
    return fail(
      'crd-contract-label',
      `CRD ${name}: ${label} lists no version the CRD serves (it serves: ${served.join(', ') || 'none'})`,
    );
  }
  if (!listed.includes(version)) {
    return fail(
      'crd-contract-label',
      `CRD ${name}: ${label} does not list ${version}, the version under test`,
    );
  }
  return pass('crd-contract-label', `${CONTRACT_LABEL}=${value}; testing ${version}`);
}
