import type { V1LabelSelector } from '@kubernetes/client-node';

export type Labels = Readonly<Record<string, string>>;

/** metav1.LabelSelector semantics: an empty selector matches everything, a missing one nothing. */
export function selectorMatches(selector: V1LabelSelector | undefined, labels: Labels | undefined): boolean {
  if (!selector) return false;
  const have = labels ?? {};
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (have[key] !== value) return false;
  }
  for (const req of selector.matchExpressions ?? []) {
    const present = Object.hasOwn(have, req.key);
    const value = have[req.key];
    const values = req.values ?? [];
    switch (req.operator) {
      case 'In':
        if (!present || !values.includes(value!)) return false;
        break;
      case 'NotIn':
        if (present && values.includes(value!)) return false;
        break;
      case 'Exists':
        if (!present) return false;
        break;
      case 'DoesNotExist':
        if (present) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

/** Validates a selector the way the API server's conversion would, returning readable problems. */
export function selectorProblems(selector: V1LabelSelector | undefined): string[] {
  if (!selector) return ['selector is required'];
  const problems: string[] = [];
  for (const req of selector.matchExpressions ?? []) {
    const n = req.values?.length ?? 0;
    if ((req.operator === 'In' || req.operator === 'NotIn') && n === 0) {
      problems.push(`matchExpressions[${req.key}]: operator ${req.operator} needs at least one value`);
    } else if ((req.operator === 'Exists' || req.operator === 'DoesNotExist') && n > 0) {
      problems.push(`matchExpressions[${req.key}]: operator ${req.operator} takes no values`);
    } else if (!['In', 'NotIn', 'Exists', 'DoesNotExist'].includes(req.operator)) {
      problems.push(`matchExpressions[${req.key}]: unknown operator ${req.operator}`);
    }
  }
  return problems;
}

/** The string form used in `labelSelector=` queries and in scale status. */
export function selectorToString(selector: V1LabelSelector | undefined): string {
  if (!selector) return '';
  const parts = Object.entries(selector.matchLabels ?? {})
    // Byte order, as labels.Selector's String() sorts its keys (localeCompare would also load ICU).
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, value]) => `${key}=${value}`);
  for (const req of selector.matchExpressions ?? []) {
    const values = [...(req.values ?? [])].sort().join(',');
    if (req.operator === 'In') parts.push(`${req.key} in (${values})`);
    else if (req.operator === 'NotIn') parts.push(`${req.key} notin (${values})`);
    else if (req.operator === 'Exists') parts.push(req.key);
    else if (req.operator === 'DoesNotExist') parts.push(`!${req.key}`);
  }
  return parts.join(',');
}
