import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHART_DIR } from '../../unit/packaging/manifests.ts';

/** One query of the dashboard: the panel it draws, its refId and its PromQL as Grafana stores it. */
export interface PanelQuery {
  panel: string;
  refId: string;
  expr: string;
}

interface Panel {
  title?: string;
  type?: string;
  targets?: Array<{ refId?: string; expr?: string }>;
  panels?: Panel[];
}

export const DASHBOARD_FILE = join(CHART_DIR, 'dashboards', 'basic-operator.json');

/** Every target of every panel (rows' nested panels too). */
export function dashboardQueries(dashboard: { panels?: Panel[] } = readDashboard()): PanelQuery[] {
  const out: PanelQuery[] = [];
  const visit = (panels: Panel[]) => {
    for (const panel of panels) {
      for (const target of panel.targets ?? []) {
        if (target.expr) out.push({ panel: panel.title ?? '', refId: target.refId ?? '', expr: target.expr });
      }
      visit(panel.panels ?? []);
    }
  };
  visit(dashboard.panels ?? []);
  return out;
}

function readDashboard(): { panels?: Panel[] } {
  return JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as { panels?: Panel[] };
}

/** The query Grafana sends: its variables replaced ($instance "All" is the allValue `.*`). */
export function substitute(expr: string, values: { job: string; rateInterval: string }): string {
  return expr
    .replaceAll('$__rate_interval', values.rateInterval)
    .replaceAll('$job', values.job)
    .replaceAll('$instance', '.*');
}

/**
 * The vector selectors of an expression (`metric{labels}`), what has to match series for it to say
 * anything: grouping clauses, range durations and function calls are left out. Metric names are
 * told from keywords by their underscore (every metric here has one; no PromQL keyword but the
 * group_ modifiers, removed first, does).
 */
export function vectorSelectors(expr: string): string[] {
  const stripped = expr
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ');
  const found = new Set<string>();
  for (const match of stripped.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\{[^}]*\})?(\s*\()?/g)) {
    const [, name = '', labels = '', call] = match;
    if (call || !name.includes('_')) continue;
    found.add(`${name}${labels}`);
  }
  return [...found];
}
