import type { V1LabelSelector, V1LabelSelectorRequirement } from '@kubernetes/client-node';
import { selectorMatches } from '../../../src/runtime/labels.ts';

/** One requirement of a `labelSelector=` query: `k=v`, `k==v`, `k!=v`, `k`, `!k`, `k in (a,b)`, `k notin (a,b)`. */
function requirement(term: string): V1LabelSelectorRequirement {
  const set = /^(\S+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(term);
  if (set) {
    const values = set[3]!.split(',').map((v) => v.trim());
    return { key: set[1]!, operator: set[2] === 'in' ? 'In' : 'NotIn', values };
  }
  const inequality = /^([^!=]+)!=(.*)$/.exec(term);
  if (inequality) return { key: inequality[1]!, operator: 'NotIn', values: [inequality[2]!] };
  const equality = /^([^!=]+)==?(.*)$/.exec(term);
  if (equality) return { key: equality[1]!, operator: 'In', values: [equality[2]!] };
  if (term.startsWith('!')) return { key: term.slice(1), operator: 'DoesNotExist' };
  return { key: term, operator: 'Exists' };
}

/** Splits on the commas between requirements, not those inside `in (a,b)`. */
function terms(selector: string): string[] {
  return (selector.match(/[^,(]+(\([^)]*\))?/g) ?? []).map((t) => t.trim()).filter((t) => t !== '');
}

/** Whether `labels` match a label selector in its query-string form ('' matches everything). */
export function labelSelectorMatches(
  selector: string | undefined,
  labels: Record<string, string> | undefined,
) {
  const parsed: V1LabelSelector = { matchExpressions: terms(selector ?? '').map(requirement) };
  return selectorMatches(parsed, labels);
}

/** Whether `obj` matches a field selector of `path=value` terms (dotted paths, equality only). */
export function fieldSelectorMatches(selector: string | undefined, obj: object): boolean {
  return terms(selector ?? '').every((term) => {
    const [path = '', value = ''] = term.split('=');
    let at: unknown = obj;
    for (const part of path.split('.')) at = (at as Record<string, unknown> | undefined)?.[part];
    return String(at ?? '') === value;
  });
}
