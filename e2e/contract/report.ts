// The conformance kit's checks, their results, and how a result reads on one line.

/** Every check of the kit, in the order it runs, with what it asks of the provider. */
export const CHECKS = {
  'crd-found': 'a CustomResourceDefinition of the kind and group exists and is established',
  'crd-namespaced': 'the CRD is namespaced',
  'crd-contract-label': 'the CRD carries the contract label, listing the tested version, which is served',
  'crd-status-subresource': 'the tested version has the status subresource',
  'object-created': 'an object made from the sample is accepted by the API server',
  'becomes-ready': 'the object reaches readiness within the timeout, without breaking the contract',
  'ready-condition-current': 'a Ready condition, if used, carries the current observedGeneration',
  'no-failure': 'no failureReason or failureMessage is reported',
  'status-well-typed':
    'every contract field of the status has its type (providerID, addresses, volumes, ...)',
  'volume-claims-exist': 'each status.volumes entry names an existing PersistentVolumeClaim in the namespace',
  'owner-tolerated': 'a controller ownerReference added by someone else stays, and the object stays ready',
  'stops-on-request': 'after the stop-requested annotation, status.stopped becomes true within the timeout',
  'compute-stopped': 'when stopped is reported, no pod that mounts a reported claim is still running',
  'claims-kept': 'when stopped is reported, every claim still exists and status.volumes still lists it',
  'stays-stopped': 'stopped stays true for the settle time, no pod comes back, the claims stay',
  deleted: 'deleting the object makes it go away within the timeout',
} as const;

export type CheckName = keyof typeof CHECKS;

export const CHECK_NAMES = Object.keys(CHECKS) as CheckName[];

export type CheckStatus = 'pass' | 'fail' | 'skip';

export interface CheckResult {
  check: CheckName;
  status: CheckStatus;
  /** What was seen: a short confirmation, on failure what broke the rule, on a skip why it did not run. */
  detail: string;
}

export const pass = (check: CheckName, detail: string): CheckResult => ({ check, status: 'pass', detail });
export const fail = (check: CheckName, detail: string): CheckResult => ({ check, status: 'fail', detail });
export const skip = (check: CheckName, detail: string): CheckResult => ({ check, status: 'skip', detail });

const NAME_WIDTH = Math.max(...CHECK_NAMES.map((name) => name.length));

/** `PASS  crd-found               CRD podmachines.infra.basicoperator.dev`: one line, whatever the detail holds. */
export function formatResult(result: CheckResult): string {
  const detail = result.detail.replace(/\s*\n\s*/g, ' ').trim();
  return `${result.status.toUpperCase().padEnd(4)}  ${result.check.padEnd(NAME_WIDTH)}  ${detail}`.trimEnd();
}

export function formatSummary(results: readonly CheckResult[]): string {
  const count = (status: CheckStatus) => results.filter((r) => r.status === status).length;
  const verdict = conforms(results) ? 'conforms to' : 'does NOT conform to';
  return `${verdict} the Machine infrastructure contract v1: ${count('pass')} passed, ${count('fail')} failed, ${count('skip')} skipped`;
}

/** Every check ran and passed. (A check is skipped only when one it needs failed.) */
export function conforms(results: readonly CheckResult[]): boolean {
  return results.length > 0 && results.every((r) => r.status === 'pass');
}
