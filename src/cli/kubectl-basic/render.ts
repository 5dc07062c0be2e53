// Text and JSON output of the tree and the why-walk.
import type { TreeNode } from './tree.ts';
import { ageText, type Finding } from './why.ts';

/** The JSON shape of one tree node (`-o json`), documented in docs/kubectl-plugin.md. */
export interface TreeNodeJson {
  kind: string;
  name: string;
  namespace: string;
  ready: boolean | null;
  status: string;
  reason: string;
  message: string;
  creationTimestamp: string | null;
  revision: string | null;
  missing: boolean;
  children: TreeNodeJson[];
}

export function treeToJson(node: TreeNode): TreeNodeJson {
  return {
    kind: node.kind,
    name: node.name,
    namespace: node.namespace,
    ready: node.ready ?? null,
    status: node.status,
    reason: node.reason,
    message: node.message,
    creationTimestamp: node.created || null,
    revision: node.revision ?? null,
    missing: node.missing,
    children: node.children.map(treeToJson),
  };
}

function readyText(ready: boolean | undefined): string {
  return ready === undefined ? '-' : ready ? 'True' : 'False';
}

interface Row {
  name: string;
  namespace: string;
  ready: string;
  status: string;
  reason: string;
  age: string;
  revision: string;
}

function rows(node: TreeNode, now: number, prefix: string, childPrefix: string, out: Row[]): void {
  out.push({
    name: `${prefix}${node.kind}/${node.name}`,
    namespace: node.namespace,
    ready: readyText(node.ready),
    status: node.status,
    reason: node.reason,
    age: node.created ? ageText(node.created, now) : '-',
    revision: node.revision ?? '',
  });
  node.children.forEach((child, i) => {
    const last = i === node.children.length - 1;
    rows(child, now, `${childPrefix}${last ? '└─' : '├─'}`, `${childPrefix}${last ? '  ' : '│ '}`, out);
  });
}

/** The trees as a table: NAMESPACE (with -A), NAME (drawn as a tree), READY, STATUS, REASON, AGE, REVISION. */
export function renderTrees(trees: TreeNode[], now: number, withNamespace: boolean): string {
  const all: Row[] = [];
  for (const tree of trees) rows(tree, now, '', '', all);
  const columns: Array<[string, keyof Row]> = [
    ...(withNamespace ? [['NAMESPACE', 'namespace'] as [string, keyof Row]] : []),
    ['NAME', 'name'],
    ['READY', 'ready'],
    ['STATUS', 'status'],
    ['REASON', 'reason'],
    ['AGE', 'age'],
    ['REVISION', 'revision'],
  ];
  const widths = columns.map(([title, key]) => Math.max(title.length, ...all.map((r) => r[key].length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(columns.map(([t]) => t)), ...all.map((r) => line(columns.map(([, k]) => r[k])))].join('\n');
}

export function renderFinding(finding: Finding): string {
  const root = finding.path[0] ?? '';
  if (!finding.blocked) return `${root}: ${finding.summary}`;
  const lines = [`${root} is blocked: ${finding.summary}`];
  if (finding.path.length > 1) lines.push(`  path: ${finding.path.join(' -> ')}`);
  for (const e of finding.evidence) lines.push(`  ${e}`);
  return lines.join('\n');
}
