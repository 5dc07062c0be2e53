// How deeply a user's object nests, measured without recursion. The apiserver's JSON decoder accepts
// up to 10,000 levels, and Node's stack overflows on a recursive walk (structuredClone, deep equality,
// JSON.stringify) of about 3,000: a walk over an object a user wrote must not be recursive, or must
// first check the depth with this.

/** The deepest core/v1 PodTemplateSpec is 12 levels (a projected volume's clusterTrustBundle selector). */
export const MAX_TEMPLATE_DEPTH = 100;

/**
 * Whether `value` nests objects and arrays more than `limit` levels deep: a scalar is 0 levels,
 * `{}` and `[]` are 1, `{"a": []}` is 2.
 */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const pending: Array<{ node: object; depth: number }> = [];
  if (typeof value === 'object' && value !== null) pending.push({ node: value, depth: 1 });
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (next.depth > limit) return true;
    for (const child of Object.values(next.node)) {
      if (typeof child === 'object' && child !== null) pending.push({ node: child, depth: next.depth + 1 });
    }
  }
  return false;
}
