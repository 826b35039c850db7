// Dependency-free SVG charts: line chart (learning curves), heatmap (similarity-error matrix),
// precision–recall curve and histogram. Every function returns a standalone SVG document string.

const FONT = 'font-family="Helvetica, Arial, sans-serif"';
/** Colour-blind-friendly categorical palette (Okabe–Ito, then Tableau). */
export const PALETTE = [
  '#0072B2',
  '#E69F00',
  '#009E73',
  '#D55E00',
  '#CC79A7',
  '#56B4E9',
  '#F0E442',
  '#000000',
  '#4E79A7',
  '#F28E2B',
  '#59A14F',
  '#E15759',
  '#B07AA1',
  '#9C755F',
];

/** Escapes text for XML content and attribute values. */
export function escapeXml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!);
}

/** Rough rendered width of `s` at `size` px in a sans-serif font. */
export function textWidth(s: string, size: number): number {
  let w = 0;
  // Calibrated against DejaVu Sans (the usual fallback for sans-serif), which is wider than Helvetica.
  for (const c of s) w += /[ijlt.,:;'|! ]/.test(c) ? 0.34 : /[mwMW@%]/.test(c) ? 0.92 : /[A-Z]/.test(c) ? 0.72 : /[0-9]/.test(c) ? 0.64 : 0.62;
  return w * size;
}

function num(v: number): string {
  return Number.isInteger(v) ? String(v) : v.toFixed(2).replace(/\.?0+$/, '');
}

export interface Ticks {
  lo: number;
  hi: number;
  step: number;
  values: number[];
}

function niceNum(x: number, round: boolean): number {
  const e = Math.floor(Math.log10(x));
  const f = x / 10 ** e;
  let nf: number;
  if (round) nf = f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10;
  else nf = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
  return nf * 10 ** e;
}

/** "Nice" axis ticks covering [min, max] with about `count` intervals (1-2-5 steps). */
export function niceTicks(min: number, max: number, count = 5): Ticks {
  if (!Number.isFinite(min) || !Number.isFinite(max)) {
    min = 0;
    max = 1;
  }
  if (min > max) [min, max] = [max, min];
  if (min === max) {
    const d = min === 0 ? 1 : Math.abs(min) * 0.1;
    min -= d;
    max += d;
  }
  const range = niceNum(max - min, false);
  const step = niceNum(range / Math.max(1, count), true);
  const decimals = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
  const lo = Number((Math.floor(min / step + 1e-9) * step).toFixed(decimals + 2));
  const hi = Number((Math.ceil(max / step - 1e-9) * step).toFixed(decimals + 2));
  const values: number[] = [];
  for (let v = lo; v <= hi + step * 1e-6; v += step) values.push(Number(v.toFixed(decimals + 2)));
  return { lo, hi, step, values };
}

/** Formats a tick value with just enough decimals for `step`. */
export function formatTick(v: number, step: number): string {
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 1e6 || (a < 1e-3 && a > 0)) return v.toExponential(1).replace('e+', 'e');
  if (a >= 1e4 && step >= 1000) {
    const k = v / 1000;
    return `${Number.isInteger(k) ? k : k.toFixed(1)}k`;
  }
  const decimals = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
  return v.toFixed(decimals);
}

function svgOpen(width: number, height: number, title?: string): string[] {
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ${FONT} font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
  ];
  if (title) {
    out.push(`<title>${escapeXml(title)}</title>`);
    out.push(`<text x="${num(width / 2)}" y="24" text-anchor="middle" font-size="16" font-weight="bold" fill="#222">${escapeXml(title)}</text>`);
  }
  return out;
}

interface Axes {
  x0: number;
  x1: number;
  y0: number;
  y1: number; // plot area (pixels), y0 = top
  xt: Ticks;
  yt: Ticks;
  sx: (v: number) => number;
  sy: (v: number) => number;
}

function makeAxes(box: { left: number; top: number; right: number; bottom: number }, xt: Ticks, yt: Ticks): Axes {
  const { left: x0, right: x1, top: y0, bottom: y1 } = box;
  const sx = (v: number): number => x0 + ((v - xt.lo) / (xt.hi - xt.lo)) * (x1 - x0);
  const sy = (v: number): number => y1 - ((v - yt.lo) / (yt.hi - yt.lo)) * (y1 - y0);
  return { x0, x1, y0, y1, xt, yt, sx, sy };
}

function drawAxes(a: Axes, xLabel?: string, yLabel?: string, xFmt?: (v: number) => string, yFmt?: (v: number) => string): string[] {
  const yText = (v: number) => (yFmt ? yFmt(v) : formatTick(v, a.yt.step));
  const out: string[] = [];
  out.push(`<g stroke="#e3e3e3" stroke-width="1">`);
  for (const v of a.yt.values) out.push(`<line x1="${num(a.x0)}" x2="${num(a.x1)}" y1="${num(a.sy(v))}" y2="${num(a.sy(v))}"/>`);
  for (const v of a.xt.values) out.push(`<line x1="${num(a.sx(v))}" x2="${num(a.sx(v))}" y1="${num(a.y0)}" y2="${num(a.y1)}"/>`);
  out.push('</g>');
  out.push(`<rect x="${num(a.x0)}" y="${num(a.y0)}" width="${num(a.x1 - a.x0)}" height="${num(a.y1 - a.y0)}" fill="none" stroke="#555" stroke-width="1"/>`);
  out.push(`<g fill="#333" font-size="11">`);
  for (const v of a.yt.values) {
    out.push(`<text x="${num(a.x0 - 6)}" y="${num(a.sy(v) + 4)}" text-anchor="end">${escapeXml(yText(v))}</text>`);
  }
  for (const v of a.xt.values) {
    const s = xFmt ? xFmt(v) : formatTick(v, a.xt.step);
    out.push(`<text x="${num(a.sx(v))}" y="${num(a.y1 + 16)}" text-anchor="middle">${escapeXml(s)}</text>`);
  }
  out.push('</g>');
  out.push(`<g stroke="#555">`);
  for (const v of a.yt.values) out.push(`<line x1="${num(a.x0 - 4)}" x2="${num(a.x0)}" y1="${num(a.sy(v))}" y2="${num(a.sy(v))}"/>`);
  for (const v of a.xt.values) out.push(`<line x1="${num(a.sx(v))}" x2="${num(a.sx(v))}" y1="${num(a.y1)}" y2="${num(a.y1 + 4)}"/>`);
  out.push('</g>');
  if (xLabel) {
    out.push(`<text x="${num((a.x0 + a.x1) / 2)}" y="${num(a.y1 + 38)}" text-anchor="middle" font-size="13" fill="#222">${escapeXml(xLabel)}</text>`);
  }
  if (yLabel) {
    const yl = Math.max(...a.yt.values.map((v) => textWidth(yText(v), 11)));
    const x = a.x0 - yl - 20;
    const y = (a.y0 + a.y1) / 2;
    out.push(
      `<text x="${num(x)}" y="${num(y)}" text-anchor="middle" font-size="13" fill="#222" transform="rotate(-90 ${num(x)} ${num(y)})">${escapeXml(yLabel)}</text>`,
    );
  }
  return out;
}

function legend(items: { name: string; color: string; dash?: string }[], x: number, y: number): string[] {
  const out: string[] = [`<g font-size="12" fill="#222">`];
  items.forEach((it, i) => {
    const yy = y + i * 20;
    const dash = it.dash ? ` stroke-dasharray="${it.dash}"` : '';
    out.push(`<line x1="${num(x)}" x2="${num(x + 22)}" y1="${num(yy)}" y2="${num(yy)}" stroke="${it.color}" stroke-width="2.5"${dash}/>`);
    out.push(`<text x="${num(x + 28)}" y="${num(yy + 4)}">${escapeXml(it.name)}</text>`);
  });
  out.push('</g>');
  return out;
}

function finiteRange(vals: number[]): [number, number] {
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of vals)
    if (Number.isFinite(v)) {
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
  return lo <= hi ? [lo, hi] : [0, 1];
}

// ---------------------------------------------------------------- line chart

export interface Series {
  name: string;
  points: [number, number][];
  color?: string;
  dashed?: boolean;
}

export interface LineChartOptions {
  series: Series[];
  title?: string;
  xLabel?: string;
  yLabel?: string;
  width?: number;
  height?: number;
  /** Fix the axis ranges (otherwise from the data, rounded to nice ticks). */
  xDomain?: [number, number];
  yDomain?: [number, number];
  /** Draw point markers (default: when every series has ≤ 60 points). */
  markers?: boolean;
  /** Extra horizontal reference lines, e.g. a baseline. */
  hlines?: { y: number; label?: string }[];
  /** Logarithmic y axis (ticks at 1, 2, 5 × 10^k); values <= 0 are left out. */
  yLog?: boolean;
}

/** Log-axis ticks: positions log10(v) for v in 1, 2, 5 × 10^k spanning [lo, hi] (given in log10 units). */
function logTicks(lo: number, hi: number): Ticks {
  const vals: number[] = [];
  for (let k = Math.floor(lo) - 1; k <= Math.ceil(hi); k++) for (const m of [1, 2, 5]) vals.push(m * 10 ** k);
  const below = vals.filter((v) => Math.log10(v) <= lo + 1e-9).pop() ?? vals[0]!;
  const above = vals.find((v) => Math.log10(v) >= hi - 1e-9) ?? vals[vals.length - 1]!;
  const values = vals.filter((v) => v >= below && v <= above).map((v) => Math.log10(v));
  return { lo: Math.log10(below), hi: Math.log10(above), step: 1, values };
}

/** Multi-series line chart (learning curves). Non-finite y values break the line. */
export function lineChart(o: LineChartOptions): string {
  const width = o.width ?? 760;
  const height = o.height ?? 440;
  const ylog = (y: number) => (y > 0 ? Math.log10(y) : NaN);
  const series = o.series.map((s, i) => ({
    ...s,
    color: s.color ?? PALETTE[i % PALETTE.length]!,
    points: o.yLog ? s.points.map(([x, y]) => [x, ylog(y)] as [number, number]) : s.points,
  }));
  const hlines = (o.hlines ?? []).map((h) => (o.yLog ? { ...h, y: ylog(h.y) } : h));
  const yFmt = o.yLog ? (v: number) => String(+(10 ** v).toPrecision(2)) : undefined;
  const xs = series.flatMap((s) => s.points.map((p) => p[0]));
  const ys = series.flatMap((s) => s.points.map((p) => p[1])).concat(hlines.map((h) => h.y));
  const [xmin, xmax] = o.xDomain ?? finiteRange(xs);
  const [ymin, ymax] = o.yDomain ? (o.yLog ? [ylog(o.yDomain[0]), ylog(o.yDomain[1])] : o.yDomain) : finiteRange(ys);
  const xt = o.xDomain ? fixedTicks(xmin, xmax) : niceTicks(xmin, xmax, Math.max(3, Math.round(width / 110)));
  const yt = o.yLog ? logTicks(ymin, ymax) : o.yDomain ? fixedTicks(ymin, ymax) : niceTicks(ymin, ymax, Math.max(3, Math.round(height / 70)));
  const legendW = series.length > 1 || (series[0]?.name ?? '') !== '' ? Math.max(...series.map((s) => textWidth(s.name, 12))) + 50 : 20;
  const yTickW = Math.max(...yt.values.map((v) => textWidth(yFmt ? yFmt(v) : formatTick(v, yt.step), 11)));
  const box = {
    left: Math.max(56, yTickW + (o.yLabel ? 34 : 14)),
    top: o.title ? 44 : 16,
    right: width - Math.min(legendW, width * 0.35),
    bottom: height - (o.xLabel ? 52 : 32),
  };
  const a = makeAxes(box, xt, yt);
  const out = svgOpen(width, height, o.title);
  out.push(...drawAxes(a, o.xLabel, o.yLabel, undefined, yFmt));
  const clipId = `clip${Math.abs(hashStr(JSON.stringify([o.title, width, height, series.length])))}`;
  out.push(`<clipPath id="${clipId}"><rect x="${num(a.x0)}" y="${num(a.y0)}" width="${num(a.x1 - a.x0)}" height="${num(a.y1 - a.y0)}"/></clipPath>`);
  out.push(`<g clip-path="url(#${clipId})">`);
  for (const h of hlines) {
    out.push(`<line x1="${num(a.x0)}" x2="${num(a.x1)}" y1="${num(a.sy(h.y))}" y2="${num(a.sy(h.y))}" stroke="#888" stroke-dasharray="5 4"/>`);
    if (h.label)
      out.push(
        `<text x="${num(a.x1 - 4)}" y="${num(a.sy(h.y) - 4)}" text-anchor="end" font-size="11" fill="#555" stroke="#ffffff" stroke-width="3" paint-order="stroke">${escapeXml(h.label)}</text>`,
      );
  }
  const markers = o.markers ?? series.every((s) => s.points.length <= 60);
  for (const s of series) {
    const pts = [...s.points].sort((p, q) => p[0] - q[0]);
    const dash = s.dashed ? ' stroke-dasharray="6 4"' : '';
    for (const seg of segments(pts)) {
      if (seg.length > 1) {
        const d = seg.map((p, i) => `${i ? 'L' : 'M'}${num(a.sx(p[0]))},${num(a.sy(p[1]))}`).join(' ');
        out.push(`<path d="${d}" fill="none" stroke="${s.color}" stroke-width="2" stroke-linejoin="round"${dash}/>`);
      }
      if (markers || seg.length === 1) {
        for (const p of seg) out.push(`<circle cx="${num(a.sx(p[0]))}" cy="${num(a.sy(p[1]))}" r="3" fill="${s.color}"/>`);
      }
    }
  }
  out.push('</g>');
  if (legendW > 20)
    out.push(
      ...legend(
        series.map((s) => ({ name: s.name, color: s.color, dash: s.dashed ? '6 4' : undefined })),
        a.x1 + 16,
        a.y0 + 10,
      ),
    );
  out.push('</svg>');
  return out.join('\n');
}

function fixedTicks(lo: number, hi: number): Ticks {
  const t = niceTicks(lo, hi, 5);
  return { lo, hi, step: t.step, values: t.values.filter((v) => v >= lo - 1e-9 && v <= hi + 1e-9) };
}

function segments(pts: [number, number][]): [number, number][][] {
  const segs: [number, number][][] = [];
  let cur: [number, number][] = [];
  for (const p of pts) {
    if (Number.isFinite(p[0]) && Number.isFinite(p[1])) cur.push(p);
    else if (cur.length) {
      segs.push(cur);
      cur = [];
    }
  }
  if (cur.length) segs.push(cur);
  return segs;
}

function hashStr(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
  return h;
}

// ---------------------------------------------------------------- heatmap

/** Viridis colour map, t in [0, 1]. */
export function viridis(t: number): string {
  const stops = ['#440154', '#482878', '#3e4989', '#31688e', '#26828e', '#1f9e89', '#35b779', '#6ece58', '#b5de2b', '#fde725'];
  return interp(stops, t);
}

/** Diverging blue–white–red map, t in [0, 1] (0.5 = white). */
export function diverging(t: number): string {
  return interp(['#2166ac', '#67a9cf', '#d1e5f0', '#f7f7f7', '#fddbc7', '#ef8a62', '#b2182b'], t);
}

/** Sequential white → dark red map (for error rates: 0 is white). */
export function reds(t: number): string {
  return interp(['#fff5f0', '#fee0d2', '#fcbba1', '#fc9272', '#fb6a4a', '#ef3b2c', '#cb181d', '#99000d'], t);
}

function interp(stops: string[], t: number): string {
  const x = Math.min(1, Math.max(0, Number.isFinite(t) ? t : 0)) * (stops.length - 1);
  const i = Math.min(stops.length - 2, Math.floor(x));
  const f = x - i;
  const a = hex(stops[i]!);
  const b = hex(stops[i + 1]!);
  const c = a.map((v, k) => Math.round(v + (b[k]! - v) * f));
  return `#${c.map((v) => v.toString(16).padStart(2, '0')).join('')}`;
}

function hex(c: string): number[] {
  return [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16));
}

function luminance(c: string): number {
  const [r, g, b] = hex(c).map((v) => {
    const s = v / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}

export interface HeatmapOptions {
  rows: string[];
  cols: string[];
  /** values[r][c]; NaN/undefined cells are drawn grey. */
  values: number[][];
  title?: string;
  /** Cell text formatter (default: up to 3 significant characters). */
  format?: (v: number) => string;
  /** Colour scale range (default: data min..max). */
  min?: number;
  max?: number;
  /** 'viridis' (default), 'reds' (0 = white; good for error rates) or 'diverging' (centred). */
  colors?: 'viridis' | 'reds' | 'diverging';
  /** Print values in cells (default: when rows and cols ≤ 40). */
  showValues?: boolean;
  /** Axis captions, e.g. 'source language' / 'target language'. */
  rowLabel?: string;
  colLabel?: string;
  /** Cell size in px (default: fits ~720 px, 12..56). */
  cellSize?: number;
}

function defaultCellFormat(v: number): string {
  const a = Math.abs(v);
  if (Number.isInteger(v)) return String(v);
  if (a >= 100) return v.toFixed(0);
  if (a >= 10) return v.toFixed(1);
  if (a >= 1) return v.toFixed(2);
  return v.toFixed(2).replace(/^(-?)0\./, '$1.'); // .12 saves space in small cells
}

/** Where a heatmap's parts go: the grid's corner and cell size, the labels, the colour bar. */
interface HeatmapLayout {
  cell: number;
  labelSize: number;
  rotate: boolean;
  titleH: number;
  left: number;
  top: number;
  gridW: number;
  gridH: number;
  barW: number;
  barX: number;
  width: number;
  height: number;
}

function heatmapLayout(o: HeatmapOptions, barLabW: number): HeatmapLayout {
  const nr = o.rows.length,
    nc = o.cols.length;
  const cell = o.cellSize ?? Math.max(12, Math.min(56, Math.floor(720 / Math.max(nr, nc, 1))));
  const labelSize = Math.max(9, Math.min(13, cell * 0.6));
  const rowLabW = Math.max(0, ...o.rows.map((s) => textWidth(s, labelSize))) + 10;
  const colLabW = Math.max(0, ...o.cols.map((s) => textWidth(s, labelSize)));
  const rotate = colLabW > cell - 4;
  const colLabH = (rotate ? colLabW * 0.72 + labelSize : labelSize) + 10;
  const titleH = o.title ? 40 : 10;
  const left = rowLabW + (o.rowLabel ? 24 : 8);
  const top = titleH + (o.colLabel ? 22 : 4) + colLabH;
  const gridW = nc * cell;
  const gridH = nr * cell;
  const barW = 16;
  const barX = left + gridW + 24;
  const rotSpill = rotate ? colLabW * 0.72 : 0; // rotated labels lean right past the grid
  const width = Math.ceil(Math.max(barX + barW + 8 + barLabW + 20, left + gridW + rotSpill + 10, o.title ? textWidth(o.title, 16) + 20 : 0));
  const height = Math.ceil(top + gridH + 16);
  return { cell, labelSize, rotate, titleH, left, top, gridW, gridH, barW, barX, width, height };
}

/** The column and row labels and the axis captions. */
function heatmapLabels(out: string[], o: HeatmapOptions, L: HeatmapLayout): void {
  const { cell, left, top } = L;
  out.push(`<g font-size="${num(L.labelSize)}" fill="#222">`);
  o.cols.forEach((c, j) => {
    const x = left + j * cell + cell / 2;
    const y = top - 6;
    if (L.rotate) out.push(`<text x="${num(x)}" y="${num(y)}" transform="rotate(-45 ${num(x)} ${num(y)})">${escapeXml(c)}</text>`);
    else out.push(`<text x="${num(x)}" y="${num(y)}" text-anchor="middle">${escapeXml(c)}</text>`);
  });
  o.rows.forEach((r, i) => {
    out.push(`<text x="${num(left - 6)}" y="${num(top + i * cell + cell / 2 + L.labelSize * 0.35)}" text-anchor="end">${escapeXml(r)}</text>`);
  });
  out.push('</g>');
  if (o.colLabel)
    out.push(
      `<text x="${num(left + L.gridW / 2)}" y="${num(L.titleH + 12)}" text-anchor="middle" font-size="13" font-style="italic" fill="#444">${escapeXml(o.colLabel)}</text>`,
    );
  if (o.rowLabel) {
    const x = 14;
    const y = top + L.gridH / 2;
    out.push(
      `<text x="${x}" y="${num(y)}" text-anchor="middle" font-size="13" font-style="italic" fill="#444" transform="rotate(-90 ${x} ${num(y)})">${escapeXml(o.rowLabel)}</text>`,
    );
  }
}

/** The cells: a colour each (grey where there is no value), a tooltip, and the value when shown. */
function heatmapCells(out: string[], o: HeatmapOptions, L: HeatmapLayout, color: (v: number) => string): void {
  const { cell } = L;
  const show = o.showValues ?? (o.rows.length <= 40 && o.cols.length <= 40);
  const fmt = o.format ?? defaultCellFormat;
  const valSize = Math.min(12, cell * 0.36);
  out.push(`<g>`);
  for (let i = 0; i < o.rows.length; i++) {
    for (let j = 0; j < o.cols.length; j++) {
      const v = o.values[i]![j]!;
      const ok = typeof v === 'number' && Number.isFinite(v);
      const fill = ok ? color(v) : '#d9d9d9';
      const x = L.left + j * cell;
      const y = L.top + i * cell;
      const tip = `${o.rows[i]} → ${o.cols[j]}: ${ok ? fmt(v) : 'n/a'}`;
      out.push(
        `<rect x="${num(x)}" y="${num(y)}" width="${cell}" height="${cell}" fill="${fill}" stroke="#ffffff" stroke-width="${cell >= 16 ? 1 : 0.5}"><title>${escapeXml(tip)}</title></rect>`,
      );
      if (show) {
        const txt = ok ? fmt(v) : '–';
        const tc = luminance(fill) > 0.35 ? '#111111' : '#ffffff';
        const fs = Math.min(valSize, (cell - 3) / Math.max(1, textWidth(txt, 1)));
        out.push(
          `<text x="${num(x + cell / 2)}" y="${num(y + cell / 2 + fs * 0.35)}" text-anchor="middle" font-size="${num(fs)}" fill="${tc}">${escapeXml(txt)}</text>`,
        );
      }
    }
  }
  out.push('</g>');
}

/** The colour bar beside the grid, with its ticks. */
function colourBar(out: string[], L: HeatmapLayout, cmap: (t: number) => string, lo: number, hi: number, ticks: number[], step: number): void {
  const { barX, barW, top, gridH } = L;
  const steps = 40;
  for (let k = 0; k < steps; k++) {
    const t0 = k / steps;
    const y = top + gridH - (k + 1) * (gridH / steps);
    out.push(`<rect x="${num(barX)}" y="${num(y)}" width="${barW}" height="${num(gridH / steps + 0.5)}" fill="${cmap(t0 + 0.5 / steps)}"/>`);
  }
  out.push(`<rect x="${num(barX)}" y="${num(top)}" width="${barW}" height="${num(gridH)}" fill="none" stroke="#555"/>`);
  out.push(`<g font-size="11" fill="#333">`);
  for (const v of ticks) {
    const y = top + gridH - ((v - lo) / (hi - lo)) * gridH;
    out.push(`<line x1="${num(barX + barW)}" x2="${num(barX + barW + 4)}" y1="${num(y)}" y2="${num(y)}" stroke="#555"/>`);
    out.push(`<text x="${num(barX + barW + 7)}" y="${num(y + 4)}">${escapeXml(formatTick(v, step))}</text>`);
  }
  out.push('</g>');
}

/** Matrix heatmap with row/column labels, a colour bar and (for ≤ 40×40) values in cells. */
export function heatmap(o: HeatmapOptions): string {
  const nr = o.rows.length;
  const nc = o.cols.length;
  if (o.values.length !== nr || o.values.some((r) => r.length !== nc)) {
    throw new Error(`heatmap: values must be ${nr}×${nc} (rows × cols)`);
  }
  const [dmin, dmax] = finiteRange(o.values.flat());
  const scheme = o.colors ?? 'viridis';
  let lo = o.min ?? dmin;
  let hi = o.max ?? dmax;
  if (scheme === 'diverging' && o.min === undefined && o.max === undefined) {
    const m = Math.max(Math.abs(lo), Math.abs(hi));
    lo = -m;
    hi = m;
  }
  if (hi === lo) hi = lo + 1;
  const cmap = scheme === 'reds' ? reds : scheme === 'diverging' ? diverging : viridis;
  const bt = niceTicks(lo, hi, 6);
  const barTicks = bt.values.filter((v) => v >= lo - 1e-12 && v <= hi + 1e-12);
  const L = heatmapLayout(o, Math.max(...barTicks.map((v) => textWidth(formatTick(v, bt.step), 11)), 10));
  const out = svgOpen(L.width, L.height, o.title);
  heatmapLabels(out, o, L);
  heatmapCells(out, o, L, (v) => cmap((v - lo) / (hi - lo)));
  colourBar(out, L, cmap, lo, hi, barTicks, bt.step);
  out.push('</svg>');
  return out.join('\n');
}

// ---------------------------------------------------------------- PR curve

export interface PrCurveOptions {
  /** [recall, precision] pairs (any order; sorted by recall). */
  points: [number, number][];
  /** Average precision, shown in the legend. */
  ap?: number;
  title?: string;
  /** Optional operating point to mark, e.g. the chosen threshold. */
  mark?: { recall: number; precision: number; label?: string };
  width?: number;
  height?: number;
}

/** Precision–recall curve on [0,1]×[0,1] with the area under it shaded and AP in the legend. */
export function prCurve(o: PrCurveOptions): string {
  const width = o.width ?? 560;
  const height = o.height ?? 480;
  const name = o.ap !== undefined ? `AP = ${o.ap.toFixed(3)}` : 'PR curve';
  const pts = o.points.filter((p) => Number.isFinite(p[0]) && Number.isFinite(p[1])).sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  const xt: Ticks = { lo: 0, hi: 1, step: 0.2, values: [0, 0.2, 0.4, 0.6, 0.8, 1] };
  const legendW = textWidth(name, 12) + 60;
  const a = makeAxes({ left: 60, top: o.title ? 44 : 16, right: width - legendW, bottom: height - 52 }, xt, xt);
  const out = svgOpen(width, height, o.title);
  out.push(...drawAxes(a, 'recall', 'precision'));
  const color = PALETTE[0]!;
  const clipId = `prclip${Math.abs(hashStr(JSON.stringify([o.title, pts.length, o.ap])))}`;
  out.push(
    `<clipPath id="${clipId}"><rect x="${num(a.x0)}" y="${num(a.y0 - 3)}" width="${num(a.x1 - a.x0 + 3)}" height="${num(a.y1 - a.y0 + 3)}"/></clipPath>`,
  );
  out.push(`<g clip-path="url(#${clipId})">`);
  if (pts.length > 0) {
    const line = pts.map((p, i) => `${i ? 'L' : 'M'}${num(a.sx(p[0]))},${num(a.sy(p[1]))}`).join(' ');
    const area = `${line} L${num(a.sx(pts[pts.length - 1]![0]))},${num(a.y1)} L${num(a.sx(pts[0]![0]))},${num(a.y1)} Z`;
    out.push(`<path d="${area}" fill="${color}" fill-opacity="0.12" stroke="none"/>`);
    out.push(`<path d="${line}" fill="none" stroke="${color}" stroke-width="2.2" stroke-linejoin="round"/>`);
    if (pts.length <= 60) for (const p of pts) out.push(`<circle cx="${num(a.sx(p[0]))}" cy="${num(a.sy(p[1]))}" r="2.5" fill="${color}"/>`);
  }
  out.push('</g>');
  if (o.mark) {
    const x = a.sx(o.mark.recall);
    const y = a.sy(o.mark.precision);
    out.push(`<circle cx="${num(x)}" cy="${num(y)}" r="5" fill="none" stroke="${PALETTE[3]}" stroke-width="2"/>`);
    if (o.mark.label) {
      const anchor = x > (a.x0 + a.x1) / 2 ? 'end' : 'start';
      const dx = anchor === 'end' ? -8 : 8;
      out.push(`<text x="${num(x + dx)}" y="${num(y + 16)}" text-anchor="${anchor}" font-size="11" fill="${PALETTE[3]}">${escapeXml(o.mark.label)}</text>`);
    }
  }
  out.push(...legend([{ name, color }], a.x1 + 16, a.y0 + 10));
  out.push('</svg>');
  return out.join('\n');
}

// ---------------------------------------------------------------- histogram

export interface HistogramOptions {
  values: ArrayLike<number>;
  /** Number of equal-width bins (default 30) or explicit ascending bin edges. */
  bins?: number | number[];
  title?: string;
  xLabel?: string;
  yLabel?: string;
  width?: number;
  height?: number;
  color?: string;
  /** Vertical marker lines, e.g. a threshold. */
  markers?: { x: number; label?: string }[];
}

/** Bin counts: equal-width over [min, max] or over explicit edges (last bin closed). */
export function binValues(values: ArrayLike<number>, bins: number | number[]): { edges: number[]; counts: number[] } {
  let edges: number[];
  if (typeof bins === 'number') {
    const n = Math.max(1, Math.floor(bins));
    const vals: number[] = [];
    for (let i = 0; i < values.length; i++) vals.push(values[i]!);
    let [lo, hi] = finiteRange(vals);
    if (lo === hi) {
      lo -= 0.5;
      hi += 0.5;
    }
    edges = Array.from({ length: n + 1 }, (_, i) => lo + ((hi - lo) * i) / n);
  } else {
    edges = [...bins];
    if (edges.length < 2) throw new Error('histogram: need at least two bin edges');
  }
  const nb = edges.length - 1;
  const counts = new Array<number>(nb).fill(0);
  const lo = edges[0]!;
  const hi = edges[nb]!;
  const uniform = typeof bins === 'number';
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (!Number.isFinite(v) || v < lo || v > hi) continue;
    let b: number;
    if (uniform) b = Math.min(nb - 1, Math.floor(((v - lo) / (hi - lo)) * nb));
    else {
      let l = 0;
      let r = nb - 1;
      while (l < r) {
        const m = (l + r + 1) >> 1;
        if (edges[m]! <= v) l = m;
        else r = m - 1;
      }
      b = l;
    }
    counts[b]!++;
  }
  return { edges, counts };
}

/** Histogram of `values`. */
export function histogram(o: HistogramOptions): string {
  const width = o.width ?? 680;
  const height = o.height ?? 420;
  const { edges, counts } = binValues(o.values, o.bins ?? 30);
  const xLo = Math.min(edges[0]!, ...(o.markers ?? []).map((m) => m.x));
  const xHi = Math.max(edges[edges.length - 1]!, ...(o.markers ?? []).map((m) => m.x));
  const xt = niceTicks(xLo, xHi, Math.max(3, Math.round(width / 110)));
  const maxC = Math.max(1, ...counts);
  const yt = niceTicks(0, maxC, 5);
  const yTickW = Math.max(...yt.values.map((v) => textWidth(formatTick(v, yt.step), 11)));
  const a = makeAxes({ left: Math.max(56, yTickW + 34), top: o.title ? 44 : 16, right: width - 20, bottom: height - 52 }, xt, { ...yt, lo: 0 });
  const out = svgOpen(width, height, o.title);
  out.push(...drawAxes(a, o.xLabel, o.yLabel ?? 'count'));
  const color = o.color ?? PALETTE[0]!;
  out.push(`<g fill="${color}" fill-opacity="0.85" stroke="#ffffff" stroke-width="0.5">`);
  counts.forEach((c, i) => {
    if (c === 0) return;
    const x0 = a.sx(edges[i]!);
    const x1 = a.sx(edges[i + 1]!);
    const y = a.sy(c);
    out.push(
      `<rect x="${num(x0)}" y="${num(y)}" width="${num(Math.max(0.5, x1 - x0))}" height="${num(a.y1 - y)}"><title>[${escapeXml(num(edges[i]!))}, ${escapeXml(num(edges[i + 1]!))}): ${c}</title></rect>`,
    );
  });
  out.push('</g>');
  for (const m of o.markers ?? []) {
    const x = a.sx(m.x);
    out.push(`<line x1="${num(x)}" x2="${num(x)}" y1="${num(a.y0)}" y2="${num(a.y1)}" stroke="${PALETTE[3]}" stroke-width="1.5" stroke-dasharray="5 3"/>`);
    if (m.label)
      out.push(
        `<text x="${num(x + 4)}" y="${num(a.y0 + 14)}" font-size="11" fill="${PALETTE[3]}" stroke="#ffffff" stroke-width="3" paint-order="stroke">${escapeXml(m.label)}</text>`,
      );
  }
  out.push(`<text x="${num(a.x1)}" y="${num(a.y0 - 6)}" text-anchor="end" font-size="11" fill="#666">n = ${countFinite(o.values)}</text>`);
  out.push('</svg>');
  return out.join('\n');
}

function countFinite(v: ArrayLike<number>): number {
  let n = 0;
  for (let i = 0; i < v.length; i++) if (Number.isFinite(v[i]!)) n++;
  return n;
}
