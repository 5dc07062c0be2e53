// Writing this controller's one condition into a Machine's status, which the Machine controller owns.
// The write is a JSON Patch to the status subresource that touches only our entry and carries `test`
// operations for what it assumed, so it never overwrites a condition of the Machine controller (and
// the Machine controller, which replaces its status guarded by resourceVersion, never drops ours).
import { MACHINE, type Machine } from '../../apis/index.ts';
import type { KubeClient } from '../../runtime/client/kube-client.ts';
import { type ConditionInput, setCondition } from '../../runtime/write/conditions.ts';
import {
  absentListGuard,
  DEFAULT_GUARDED_PATCH_ATTEMPTS,
  isGuardFailure,
  type JsonPatch,
  uidGuard,
} from '../../runtime/write/guarded-patch.ts';

function sameCondition(
  a: { status: string; reason: string; message: string; observedGeneration?: number },
  b: ConditionInput,
): boolean {
  return (
    a.status === b.status &&
    a.reason === b.reason &&
    a.message === b.message &&
    a.observedGeneration === b.observedGeneration
  );
}

/**
 * The patch that sets `input` in `machine.status.conditions`, or undefined if it is already set.
 * - our entry exists at index i: test that index i still has our type, replace it;
 * - the list exists without it: test the whole list, append (a concurrent writer makes the test fail);
 * - no list (or no status): guard by resourceVersion, add it.
 */
export function conditionPatch(machine: Machine, input: ConditionInput, now: Date): JsonPatch | undefined {
  const conditions = machine.status?.conditions;
  const index = conditions?.findIndex((c) => c.type === input.type) ?? -1;
  const existing = index >= 0 ? conditions![index] : undefined;
  if (existing && sameCondition(existing, input)) return undefined;
  const next = setCondition(conditions, input, now);
  const entry = next.find((c) => c.type === input.type)!;
  if (existing) {
    return [
      ...uidGuard(machine),
      { op: 'test', path: `/status/conditions/${index}/type`, value: input.type },
      { op: 'replace', path: `/status/conditions/${index}`, value: entry },
    ];
  }
  if (conditions) {
    return [
      ...uidGuard(machine),
      { op: 'test', path: '/status/conditions', value: conditions.map((c) => ({ ...c })) },
      { op: 'add', path: '/status/conditions/-', value: entry },
    ];
  }
  if (machine.status) {
    return [...absentListGuard(machine), { op: 'add', path: '/status/conditions', value: [entry] }];
  }
  return [...absentListGuard(machine), { op: 'add', path: '/status', value: { conditions: [entry] } }];
}

/**
 * Sets the condition on the Machine through its status subresource; on a failed guard, re-reads the
 * Machine and rebuilds the patch (a few attempts). Returns the Machine as last seen.
 */
export async function setMachineCondition(
  client: KubeClient,
  machine: Machine,
  input: ConditionInput,
  options: { now?: Date; signal?: AbortSignal; attempts?: number } = {},
): Promise<Machine> {
  const attempts = options.attempts ?? DEFAULT_GUARDED_PATCH_ATTEMPTS;
  const namespace = machine.metadata.namespace;
  const name = machine.metadata.name ?? '';
  let current = machine;
  for (let attempt = 1; ; attempt++) {
    const patch = conditionPatch(current, input, options.now ?? new Date());
    if (!patch) return current;
    try {
      return await client.patch<Machine>(MACHINE, {
        namespace,
        name,
        patchType: 'json',
        body: patch,
        subresource: 'status',
        signal: options.signal,
      });
    } catch (err) {
      if (attempt >= attempts || !isGuardFailure(err)) throw err;
    }
    current = await client.get<Machine>(MACHINE, namespace, name, options.signal);
    if (current.metadata.uid !== machine.metadata.uid) return current;
  }
}
