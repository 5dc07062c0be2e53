// Renders a Prometheus range query's result as a PNG line chart:
//   node scripts/plot-panel.ts <query_range.json> <out.png>
// The input is the body of GET /api/v1/query_range (the dashboard test saves one per run, see
// docs/dashboard.md); it prints which colour is which series, for the caption.
import { readFileSync, writeFileSync } from 'node:fs';
import { lineChart, paletteColour } from './plot/line-chart.ts';

interface RangeResult {
  data: { result: Array<{ metric: Record<string, string>; values: Array<[number, string]> }> };
}

const [input, output] = process.argv.slice(2);
if (!input || !output) {
  process.stderr.write('usage: node scripts/plot-panel.ts <query_range.json> <out.png>\n');
  process.exit(2);
}
const body = JSON.parse(readFileSync(input, 'utf8')) as RangeResult;
const result = [...body.data.result].sort((a, b) => label(a.metric).localeCompare(label(b.metric)));
if (result.length === 0) {
  process.stderr.write(`${input}: the query returned no series\n`);
  process.exit(1);
}
const series = result.map((r, i) => ({
  points: r.values.map(([t, v]) => [t, Number(v)] as const),
  colour: paletteColour(i).rgb,
}));
writeFileSync(output, lineChart(series));
for (const [i, r] of result.entries()) process.stdout.write(`${paletteColour(i).name}: ${label(r.metric)}\n`);

function label(metric: Record<string, string>): string {
  return Object.values(metric).join(' ') || '{}';
}
