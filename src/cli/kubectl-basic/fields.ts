// Reading fields of objects known only as JSON (any kind, providers included), without `any`.
import type { Condition } from '../../apis/index.ts';
import type { KubeObject } from '../../runtime/client/object.ts';

type Fields = Record<string, unknown>;

function isFields(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value at `path` (dot-separated field names), or undefined. */
export function field(obj: unknown, path: string): unknown {
  let current: unknown = obj;
  for (const part of path.split('.')) {
    if (!isFields(current)) return undefined;
    current = current[part];
  }
  return current;
}

export function stringField(obj: unknown, path: string): string | undefined {
  const value = field(obj, path);
  return typeof value === 'string' ? value : undefined;
}

export function numberField(obj: unknown, path: string): number | undefined {
  const value = field(obj, path);
  return typeof value === 'number' ? value : undefined;
}

export function listField(obj: unknown, path: string): Fields[] {
  const value = field(obj, path);
  return Array.isArray(value) ? value.filter(isFields) : [];
}

/** status.conditions[type=`type`] of any object with metav1.Condition-like conditions. */
export function conditionOf(obj: unknown, type: string): Condition | undefined {
  const found = listField(obj, 'status.conditions').find((c) => c.type === type);
  if (!found || typeof found.status !== 'string') return undefined;
  return {
    type,
    status: found.status as Condition['status'],
    reason: typeof found.reason === 'string' ? found.reason : '',
    message: typeof found.message === 'string' ? found.message : '',
    lastTransitionTime: typeof found.lastTransitionTime === 'string' ? found.lastTransitionTime : '',
  };
}

export function nameOf(obj: KubeObject): string {
  return obj.metadata?.name ?? '';
}

export function uidOf(obj: KubeObject): string {
  return obj.metadata?.uid ?? '';
}

/** Whether `child` lists `owner` (by uid) among its owner references. */
export function ownedBy(child: KubeObject, owner: KubeObject): boolean {
  const uid = uidOf(owner);
  return uid !== '' && (child.metadata?.ownerReferences ?? []).some((ref) => ref.uid === uid);
}
