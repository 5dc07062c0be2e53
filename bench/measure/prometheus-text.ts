/** A labelled sample of the Prometheus text format: `metric{label="value",...} number`. */
export interface Sample {
  metric: string;
  labels: Record<string, string>;
  value: number;
}

/** The labelled samples of a /metrics page, those of the `metrics` named only; other lines are skipped. */
export function* labelledSamples(text: string, metrics: readonly string[]): Generator<Sample> {
  for (const line of text.split('\n')) {
    const brace = line.indexOf('{');
    if (brace < 0) continue;
    const metric = line.slice(0, brace);
    if (!metrics.includes(metric)) continue;
    const labels = Object.fromEntries([...line.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    yield { metric, labels, value: Number(line.slice(line.lastIndexOf(' ') + 1)) };
  }
}
