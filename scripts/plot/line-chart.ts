import { Raster, type Rgb } from './png.ts';

/** One line: [unix seconds, value] points, as Prometheus' query_range returns them. */
export interface Series {
  points: ReadonlyArray<readonly [number, number]>;
  colour: Rgb;
}

/** Grafana's first palette colours, in the order it gives them to series. */
const PALETTE: readonly { name: string; rgb: Rgb }[] = [
  { name: 'green', rgb: [115, 191, 105] },
  { name: 'yellow', rgb: [242, 204, 12] },
  { name: 'blue', rgb: [87, 148, 242] },
  { name: 'orange', rgb: [255, 152, 48] },
  { name: 'red', rgb: [242, 73, 92] },
  { name: 'purple', rgb: [184, 119, 217] },
  { name: 'dark green', rgb: [55, 135, 45] },
  { name: 'dark blue', rgb: [31, 96, 196] },
];

/** The colour of the `index`th series (the palette repeats). */
export function paletteColour(index: number): { name: string; rgb: Rgb } {
  return PALETTE[index % PALETTE.length] ?? { name: 'grey', rgb: [128, 128, 128] };
}

// 3x5 digits (and '.'), each row three bits, for the axis labels.
const GLYPHS: Record<string, readonly number[]> = {
  '0': [7, 5, 5, 5, 7],
  '1': [2, 6, 2, 2, 7],
  '2': [7, 1, 7, 4, 7],
  '3': [7, 1, 7, 1, 7],
  '4': [5, 5, 7, 1, 1],
  '5': [7, 4, 7, 1, 7],
  '6': [7, 4, 7, 5, 7],
  '7': [7, 1, 1, 1, 1],
  '8': [7, 5, 7, 5, 7],
  '9': [7, 5, 7, 1, 7],
  '.': [0, 0, 0, 0, 2],
};
const SCALE = 2;
const GLYPH_WIDTH = 4 * SCALE;

function text(raster: Raster, x: number, y: number, value: string, colour: Rgb): void {
  [...value].forEach((char, i) => {
    const rows = GLYPHS[char] ?? [];
    rows.forEach((bits, row) => {
      for (let col = 0; col < 3; col++) {
        if (bits & (4 >> col))
          raster.fillRect(x + i * GLYPH_WIDTH + col * SCALE, y + row * SCALE, SCALE, SCALE, colour);
      }
    });
  });
}

const MARGIN = { left: 64, right: 16, top: 16, bottom: 36 };
const AXIS: Rgb = [60, 60, 60];
const GRID: Rgb = [225, 225, 225];

/** A niceish step (1, 2 or 5 times a power of ten) giving about `ticks` intervals up to `max`. */
function niceStep(max: number, ticks: number): number {
  const rough = max / ticks;
  const power = 10 ** Math.floor(Math.log10(rough));
  return [1, 2, 5, 10].map((m) => m * power).find((step) => step >= rough) ?? rough;
}

function label(value: number): string {
  return Number.isInteger(value)
    ? String(value)
    : value.toFixed(Math.max(0, -Math.floor(Math.log10(value)) + 1));
}

/**
 * A line chart of `series` from 0 upwards: horizontal grid lines labelled with their values on the
 * left, the time axis labelled in seconds from the first point. No legend: the caption gives the
 * colours.
 */
export function lineChart(series: readonly Series[], width = 800, height = 320): Buffer {
  const raster = new Raster(width, height);
  const all = series.flatMap((s) => s.points);
  const t0 = Math.min(...all.map(([t]) => t));
  const t1 = Math.max(...all.map(([t]) => t));
  const top = Math.max(...all.map(([, v]) => v), 1e-9);
  const step = niceStep(top, 5);
  const yMax = Math.ceil(top / step) * step;
  const plotW = width - MARGIN.left - MARGIN.right;
  const plotH = height - MARGIN.top - MARGIN.bottom;
  const px = (t: number) => MARGIN.left + ((t - t0) / Math.max(t1 - t0, 1)) * plotW;
  const py = (v: number) => MARGIN.top + plotH - (v / yMax) * plotH;

  for (let v = 0; v <= yMax + step / 2; v += step) {
    raster.line(MARGIN.left, py(v), width - MARGIN.right, py(v), GRID);
    const s = label(Number(v.toPrecision(6)));
    text(raster, MARGIN.left - 8 - s.length * GLYPH_WIDTH, py(v) - 5, s, AXIS);
  }
  const tStep = niceStep(Math.max(t1 - t0, 1), 6);
  for (let t = 0; t <= t1 - t0; t += tStep) {
    raster.line(px(t0 + t), MARGIN.top + plotH, px(t0 + t), MARGIN.top + plotH + 4, AXIS);
    const s = label(t);
    text(raster, px(t0 + t) - (s.length * GLYPH_WIDTH) / 2, MARGIN.top + plotH + 10, s, AXIS);
  }
  raster.line(MARGIN.left, MARGIN.top, MARGIN.left, MARGIN.top + plotH, AXIS);
  raster.line(MARGIN.left, MARGIN.top + plotH, width - MARGIN.right, MARGIN.top + plotH, AXIS);

  for (const { points, colour } of series) {
    for (let i = 1; i < points.length; i++) {
      const [ta, va] = points[i - 1] ?? [0, 0];
      const [tb, vb] = points[i] ?? [0, 0];
      raster.line(px(ta), py(va), px(tb), py(vb), colour, 2);
    }
  }
  return raster.png();
}
