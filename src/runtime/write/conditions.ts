import { cutToCharacters, fitsCharacters } from '../text-limits.ts';

/**
 * metav1.Condition helpers with the semantics of apimachinery's meta.SetStatusCondition: one
 * condition per type, and lastTransitionTime moves only when status changes. Every function returns
 * a new array and leaves its input alone, so a computed status can be compared with the current one.
 */

export type ConditionStatus = 'True' | 'False' | 'Unknown';

/** metav1.Condition as JSON (timestamps are RFC 3339 strings); src/apis re-exports it. */
export interface Condition {
  type: string;
  status: ConditionStatus;
  observedGeneration?: number;
  lastTransitionTime: string;
  reason: string;
  message: string;
}

/** What a controller decides; setCondition fills in lastTransitionTime. */
export interface ConditionInput {
  type: string;
  status: ConditionStatus;
  reason: string;
  message: string;
  observedGeneration?: number;
  /** Used as the transition time when the status changes; `now` otherwise. */
  lastTransitionTime?: string;
}

/** metav1.Condition's reason pattern, narrowed to start with an upper-case letter (CamelCase). */
const REASON_PATTERN = /^[A-Z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;
const REASON_MAX_LENGTH = 1024;
/** A qualified name (`[dns-prefix/]name`), as metav1.Condition's type must be. */
const TYPE_PATTERN =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const TYPE_MAX_LENGTH = 316;
/** metav1.Condition's limit, in characters. */
const MESSAGE_MAX_LENGTH = 32768;
/**
 * How much of a message the operator's conditions keep, in characters: 4,096, an eighth of what
 * metav1.Condition takes. A status is rewritten with every status write and sent to every watcher
 * of its kind; an API error's message copied whole into it (a webhook may refuse a pod with 40 KiB)
 * made each of a tenant's sets and deployments carry 32 KiB through every write and watch event (a
 * status patch of 17 ms of the API server's CPU instead of 5, docs/soak.md). Any message a
 * controller writes, or a well-behaved webhook or validation returns, is shorter and kept whole.
 */
export const CONDITION_MESSAGE_CHARACTERS = 4096;
const STATUSES: readonly string[] = ['True', 'False', 'Unknown'];

/**
 * Reasons and types are constants in controller code, so a bad one is a programming error that tests
 * catch; outside production we fail loudly, in production the API server's schema is the last word.
 */
const STRICT_CHECKS = process.env.NODE_ENV !== 'production';

export function isValidConditionReason(reason: string): boolean {
  return reason.length <= REASON_MAX_LENGTH && REASON_PATTERN.test(reason);
}

/** Problems the API server (or our CamelCase rule) would have with this condition; empty when fine. */
export function conditionProblems(condition: ConditionInput): string[] {
  const problems: string[] = [];
  if (condition.type.length > TYPE_MAX_LENGTH || !TYPE_PATTERN.test(condition.type)) {
    problems.push(`type ${JSON.stringify(condition.type)} is not a qualified name`);
  }
  if (!STATUSES.includes(condition.status)) {
    problems.push(`status ${JSON.stringify(condition.status)} is not True, False or Unknown`);
  }
  if (!isValidConditionReason(condition.reason)) {
    problems.push(
      `reason ${JSON.stringify(condition.reason)} is not CamelCase (e.g. MinimumReplicasAvailable)`,
    );
  }
  if (!fitsCharacters(condition.message, MESSAGE_MAX_LENGTH)) {
    problems.push(`message is longer than ${MESSAGE_MAX_LENGTH} characters`);
  }
  if (
    condition.observedGeneration !== undefined &&
    !(Number.isInteger(condition.observedGeneration) && condition.observedGeneration >= 0)
  ) {
    problems.push(`observedGeneration ${condition.observedGeneration} is not a non-negative integer`);
  }
  return problems;
}

/** Throws on an invalid condition, except in production (NODE_ENV=production). */
export function assertValidCondition(condition: ConditionInput): void {
  if (!STRICT_CHECKS) return;
  const problems = conditionProblems(condition);
  if (problems.length > 0) throw new TypeError(`invalid condition ${condition.type}: ${problems.join('; ')}`);
}

/** metav1.Time's wire format: RFC 3339 in UTC with whole seconds. */
export function rfc3339(time: Date): string {
  return `${time.toISOString().slice(0, 19)}Z`;
}

export function findCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return conditions?.find((condition) => condition.type === type);
}

/**
 * Returns `conditions` with `input` set. A new type is appended with lastTransitionTime = now; an
 * existing one gets input's reason, message and observedGeneration, and a new lastTransitionTime only
 * if its status changes. Order is kept, so an unchanged set of conditions compares deep-equal. A
 * message longer than CONDITION_MESSAGE_CHARACTERS is cut, ending in `... (N more characters)`.
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  input: ConditionInput,
  now: Date,
): Condition[] {
  const next = withBoundedMessage(input);
  assertValidCondition(next);
  const list = conditions ?? [];
  const index = list.findIndex((condition) => condition.type === next.type);
  const existing = list[index];
  if (existing === undefined) {
    return [...list, buildCondition(next, next.lastTransitionTime ?? rfc3339(now))];
  }
  const transitionTime =
    existing.status === next.status ? existing.lastTransitionTime : (next.lastTransitionTime ?? rfc3339(now));
  const updated = buildCondition(next, transitionTime);
  return list.map((condition, i) => (i === index ? updated : condition));
}

/** Returns `conditions` without the condition of this type (a copy even when there is none). */
export function removeCondition(conditions: readonly Condition[] | undefined, type: string): Condition[] {
  return (conditions ?? []).filter((condition) => condition.type !== type);
}

/**
 * The one place condition messages are cut (to CONDITION_MESSAGE_CHARACTERS, within
 * metav1.Condition's limit): they often carry an API error's message, which may be longer than a
 * status write takes, and would be copied into every status of the objects it concerns. A status
 * field that repeats a condition's message (a provider's failureMessage) is cut with it.
 */
export function boundedConditionMessage(message: string): string {
  return cutToCharacters(message, CONDITION_MESSAGE_CHARACTERS);
}

function withBoundedMessage(input: ConditionInput): ConditionInput {
  return { ...input, message: boundedConditionMessage(input.message) };
}

function buildCondition(input: ConditionInput, lastTransitionTime: string): Condition {
  const condition: Condition = {
    type: input.type,
    status: input.status,
    lastTransitionTime,
    reason: input.reason,
    message: input.message,
  };
  // Absent rather than undefined, so the result deep-equals what the API server returns.
  if (input.observedGeneration !== undefined) condition.observedGeneration = input.observedGeneration;
  return condition;
}

/**
 * kstatus's normal-true condition: every kind the operator reconciles and reports a readiness for
 * says it with `Ready` (kubectl wait --for=condition=Ready).
 */
export const READY = 'Ready';

/**
 * kstatus's abnormal-true condition for a terminal failure: `Stalled=True` makes kstatus (kubectl
 * wait, Helm --wait, Flux) report Failed at once instead of waiting out a timeout. Present only
 * while stalled: `failure` undefined removes it.
 */
export const STALLED = 'Stalled';

export function setStalled(
  conditions: readonly Condition[] | undefined,
  failure: { reason: string; message: string } | undefined,
  observedGeneration: number | undefined,
  now: Date,
): Condition[] {
  if (!failure) return removeCondition(conditions, STALLED);
  return setCondition(
    conditions,
    {
      type: STALLED,
      status: 'True',
      reason: failure.reason,
      message: failure.message,
      ...(observedGeneration !== undefined ? { observedGeneration } : {}),
    },
    now,
  );
}
