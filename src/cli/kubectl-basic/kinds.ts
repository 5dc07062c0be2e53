// The kinds `kubectl basic` starts from (root-kinds.ts, generated from the controllers' declarations),
// and the names a user may type for each.
import type { Unstructured } from '../../runtime/client/object.ts';
import type { ResourceType } from '../../runtime/client/resource.ts';
import { ROOT_RESOURCES, type RootKind } from './root-kinds.ts';

export type { RootKind };

interface NamedResource {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly singular: string;
  readonly shortNames: readonly string[];
  readonly namespaced: boolean;
}

const ROOTS: readonly NamedResource[] = ROOT_RESOURCES;

/** The resource of a root kind, read unstructured. */
export function rootResource(kind: RootKind): ResourceType<Unstructured> {
  const found = ROOTS.find((r) => r.kind === kind);
  if (!found) throw new Error(`unknown kind ${kind}`);
  const { group, version, plural, namespaced } = found;
  return { group, version, kind, plural, namespaced };
}

/**
 * The kind a user means by `text` (case-insensitive): its kind, singular, plural, a short name, or
 * any of these followed by `.` and the API group (`machines.infra.basicoperator.dev`).
 */
export function resolveKind(text: string): RootKind | undefined {
  const lower = text.toLowerCase();
  for (const r of ROOTS) {
    const names = [r.kind.toLowerCase(), r.singular, r.plural, ...r.shortNames];
    if (names.some((n) => lower === n || lower === `${n}.${r.group}`)) return r.kind as RootKind;
  }
  return undefined;
}

/** Every name resolveKind accepts without a group, for the usage message. */
export function kindNames(): string[] {
  return ROOTS.map((r) => [r.kind, r.plural, ...r.shortNames].join(', '));
}
