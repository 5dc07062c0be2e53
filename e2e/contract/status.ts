// Reading a provider object's status the way the Machine controller does (readInfrastructure), and
// saying in one line what it shows (pure: given the object).
import {
  type InfrastructureView,
  isViolation,
  readInfrastructure,
  type UnstructuredObject,
} from '../../src/apis/infra/contract/index.ts';
import { type CheckResult, fail, pass } from './report.ts';

type Fields = Record<string, unknown>;
const isFields = (value: unknown): value is Fields =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function statusOf(obj: UnstructuredObject): Fields {
  return isFields(obj.status) ? obj.status : {};
}

function readyCondition(obj: UnstructuredObject): Fields | undefined {
  const conditions = statusOf(obj).conditions;
  return Array.isArray(conditions) ? conditions.find((c) => isFields(c) && c.type === 'Ready') : undefined;
}

const clip = (text: string, max = 200) => (text.length > max ? `${text.slice(0, max)}...` : text);

/** What the status shows, in one line: readiness, failure, stopped, volumes. */
export function describeStatus(obj: UnstructuredObject | undefined): string {
  if (!obj) return 'the object is gone';
  if (obj.status === undefined) return 'no status yet';
  const status = statusOf(obj);
  const parts: string[] = [];
  const ready = readyCondition(obj);
  if (ready) {
    const why = [ready.reason, ready.message].filter((s) => typeof s === 'string' && s).join(': ');
    parts.push(
      `Ready=${String(ready.status)}${why ? ` (${clip(why)})` : ''}, observedGeneration ${String(ready.observedGeneration ?? 'absent')} of generation ${String(obj.metadata?.generation ?? '?')}`,
    );
  } else if (status.ready !== undefined) parts.push(`status.ready=${JSON.stringify(status.ready)}`);
  else parts.push('no readiness reported (neither a Ready condition nor status.ready)');
  if (status.failureReason !== undefined || status.failureMessage !== undefined) {
    const message =
      status.failureMessage === undefined ? '' : `: ${clip(JSON.stringify(status.failureMessage))}`;
    parts.push(`failure ${JSON.stringify(status.failureReason)}${message}`);
  }
  if (status.stopped !== undefined) parts.push(`status.stopped=${JSON.stringify(status.stopped)}`);
  if (Array.isArray(status.volumes)) parts.push(`${status.volumes.length} volume(s)`);
  return parts.join(', ');
}

/** Where a wait for readiness stands with this object. */
export type Readiness =
  | { state: 'ready'; view: InfrastructureView }
  | { state: 'waiting' }
  | { state: 'broken'; violation: string }
  | { state: 'failed'; reason: string; message: string }
  | { state: 'gone' };

export function readiness(obj: UnstructuredObject | undefined): Readiness {
  if (!obj) return { state: 'gone' };
  const view = readInfrastructure(obj);
  if (isViolation(view)) return { state: 'broken', violation: view.violation };
  if (view.failure) return { state: 'failed', ...view.failure };
  return view.ready ? { state: 'ready', view } : { state: 'waiting' };
}

/** The contract's Ready condition carries observedGeneration, so a reader can tell it is current. */
export function checkReadyConditionCurrent(obj: UnstructuredObject): CheckResult {
  const ready = readyCondition(obj);
  if (!ready)
    return pass('ready-condition-current', 'readiness reported by status.ready (no Ready condition)');
  const generation = obj.metadata?.generation;
  const observed = ready.observedGeneration;
  if (typeof observed !== 'number') {
    return fail(
      'ready-condition-current',
      `the Ready condition has no observedGeneration (the contract requires it, so a reader can tell the condition is about generation ${String(generation)})`,
    );
  }
  return generation === undefined || observed >= generation
    ? pass(
        'ready-condition-current',
        `Ready observedGeneration ${observed}, generation ${String(generation)}`,
      )
    : fail(
        'ready-condition-current',
        `Ready=True is for generation ${observed}, the object is at generation ${generation}`,
      );
}

export function checkNoFailure(obj: UnstructuredObject): CheckResult {
  const status = statusOf(obj);
  if (!status.failureReason && !status.failureMessage) return pass('no-failure', 'no failureReason');
  return fail(
    'no-failure',
    `terminal failure reported: failureReason ${JSON.stringify(status.failureReason)}, failureMessage ${clip(JSON.stringify(status.failureMessage) ?? '')}`,
  );
}

export function checkWellTyped(obj: UnstructuredObject): CheckResult {
  const view = readInfrastructure(obj);
  if (isViolation(view))
    return fail('status-well-typed', `the status breaks the contract: ${view.violation}`);
  const seen = [
    view.providerID !== undefined ? `providerID ${view.providerID}` : 'no providerID',
    view.addresses !== undefined
      ? `addresses ${view.addresses.map((a) => `${a.type}=${a.address}`).join(', ') || '[]'}`
      : 'no addresses',
    view.volumes !== undefined
      ? `volumes ${view.volumes.map((v) => `${v.name}→${v.claimName}`).join(', ') || '[]'}`
      : 'no volumes',
  ];
  return pass('status-well-typed', seen.join('; '));
}
