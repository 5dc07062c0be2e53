// From a reference to the resource type of its kind, and whether that kind follows the contract:
// discovery gives the kind's plural, the CRD `<plural>.<group>` (cached metadata only) its labels.
import {
  CONTRACT_LABEL,
  CONTRACT_VERSION,
  contractVersions,
  type InfrastructureReference,
} from '../../apis/index.ts';
import type { Informer } from '../../runtime/cache/informer.ts';
import { parseApiVersion, type ResourceDiscovery } from '../../runtime/client/discovery.ts';
import type { KubeObject, Unstructured } from '../../runtime/client/object.ts';
import type { ResourceType } from '../../runtime/client/resource.ts';

export type Resolution =
  | { ok: true; type: ResourceType<Unstructured> }
  | {
      ok: false;
      reason: 'ContractNotDeclared' | 'ContractViolation';
      message: string;
      /** Discovery was read too recently to read again: look again after this long. */
      retryAfterMs?: number;
    };

export interface ResolverDeps {
  discovery: ResourceDiscovery;
  /** CustomResourceDefinitions, metadata only: their names and labels. */
  crds: Informer<KubeObject>;
}

/** The name of the CRD of a resource: `<plural>.<group>`. */
export function crdName(type: Pick<ResourceType, 'plural' | 'group'>): string {
  return `${type.plural}.${type.group}`;
}

/**
 * Whether the kind a reference names may be followed: served by the API server (discovery), defined
 * by a CRD whose contract label lists the referenced version, and namespaced. Errors of the requests
 * (a 403 on discovery, say) are thrown.
 */
export async function resolveReference(
  deps: ResolverDeps,
  ref: InfrastructureReference,
  signal?: AbortSignal,
): Promise<Resolution> {
  const { group, version } = parseApiVersion(ref.apiVersion);
  const answer = await deps.discovery.lookup(ref.apiVersion, ref.kind, signal);
  if (!answer.found) {
    return {
      ok: false,
      reason: 'ContractNotDeclared',
      message: `no kind ${ref.kind} is served in ${ref.apiVersion}: install the provider's CustomResourceDefinition (labelled ${CONTRACT_LABEL}) or fix spec.infrastructureRef`,
      ...(answer.retryAfterMs !== undefined ? { retryAfterMs: answer.retryAfterMs } : {}),
    };
  }
  const type = answer.resource;
  const name = crdName(type);
  const crd = group === '' ? undefined : deps.crds.get(undefined, name);
  if (!crd) {
    const lookedFor = group === '' ? 'a built-in kind' : `looked for ${name}`;
    return {
      ok: false,
      reason: 'ContractNotDeclared',
      message: `${ref.kind} (${ref.apiVersion}) is not defined by a CustomResourceDefinition (${lookedFor}); only a provider's custom resource can follow the Machine infrastructure contract ${CONTRACT_VERSION}`,
    };
  }
  const versions = contractVersions(crd.metadata?.labels);
  if (!versions.includes(version)) {
    const has = versions.length > 0 ? `it lists ${versions.join(', ')}` : 'it has no such label';
    return {
      ok: false,
      reason: 'ContractNotDeclared',
      message: `CustomResourceDefinition ${name} does not declare the Machine infrastructure contract ${CONTRACT_VERSION} for version ${version}: its label ${CONTRACT_LABEL} must list ${version} (${has})`,
    };
  }
  if (!type.namespaced) {
    return {
      ok: false,
      reason: 'ContractViolation',
      message: `${ref.kind} (${ref.apiVersion}) is cluster-scoped; the contract requires a namespaced kind, in the Machine's namespace`,
    };
  }
  return { ok: true, type };
}
