/**
 * Minimal SVG charts for the simulator's HTML report, drawn by hand (no
 * scripts, no external resources): line/scatter charts with linear or log
 * axes, and grouped bar charts. Every function returns an <svg> string.
 */

interface Axis {
  label: string;
  log?: boolean;
  min?: number;
  max?: number;
  /** Tick label formatter. */
  format?: (v: number) => string;
}

export interface Series {
  name: string;
  color: string;
  points: [number, number][];
  /** 'line' (default), 'step' (a CDF), 'scatter'. */
  kind?: 'line' | 'step' | 'scatter';
  dashed?: boolean;
  /** Scatter marker: circle (default) or hollow square. */
  marker?: 'circle' | 'square';
}

export interface LineChart {
  title: string;
  x: Axis;
  y: Axis;
  series: Series[];
  width?: number;
  height?: number;
  /** Optional note under the title. */
  note?: string;
}

interface BarGroup {
  name: string;
  color: string;
  values: number[];
}

export interface BarChart {
  title: string;
  categories: string[];
  groups: BarGroup[];
  y: Axis;
  xLabel: string;
  width?: number;
  height?: number;
  note?: string;
}

export const PALETTE = [
  '#1f77b4',
  '#d62728',
  '#2ca02c',
  '#9467bd',
  '#ff7f0e',
  '#17becf',
  '#8c564b',
  '#e377c2',
  '#7f7f7f',
  '#bcbd22',
];

const M = { left: 64, right: 16, top: 40, bottom: 52 };

export function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** A compact number: 0.0012, 1.5, 12, 1.2k, 3.4M. */
export function fmt(v: number): string {
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 1e6) return `${+(v / 1e6).toPrecision(3)}M`;
  if (a >= 1e3) return `${+(v / 1e3).toPrecision(3)}k`;
  if (a >= 1) return `${+v.toPrecision(3)}`;
  return `${+v.toPrecision(2)}`;
}

interface Scale {
  (v: number): number;
  ticks: number[];
}

function scale(axis: Axis, values: number[], from: number, to: number): Scale {
  let lo = axis.min ?? Math.min(...values);
  let hi = axis.max ?? Math.max(...values);
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) {
    lo = axis.log === true ? 1 : 0;
    hi = axis.log === true ? 10 : 1;
  }
  if (axis.log === true) {
    lo = Math.max(lo, 1e-12);
    hi = Math.max(hi, lo * 10);
    const l0 = Math.floor(Math.log10(lo));
    const l1 = Math.ceil(Math.log10(hi));
    const f = ((v: number) => from + ((Math.log10(Math.max(v, 10 ** l0)) - l0) / (l1 - l0)) * (to - from)) as Scale;
    f.ticks = [];
    for (let e = l0; e <= l1; e++) f.ticks.push(10 ** e);
    return f;
  }
  // One distinct value: widen around it so the ticks differ (not five ticks of the same label).
  if (hi === lo) {
    const pad = lo === 0 ? 1 : Math.abs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
  const step = niceStep((hi - lo) / 5);
  const t0 = Math.floor(lo / step) * step;
  const t1 = Math.ceil(hi / step) * step;
  const f = ((v: number) => from + ((v - t0) / (t1 - t0)) * (to - from)) as Scale;
  f.ticks = [];
  for (let t = t0; t <= t1 + step / 2; t += step) f.ticks.push(+t.toPrecision(12));
  return f;
}

function niceStep(raw: number): number {
  const p = 10 ** Math.floor(Math.log10(raw));
  const m = raw / p;
  return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

function frame(title: string, note: string | undefined, w: number, h: number, body: string): string {
  const sub = note === undefined ? '' : `<text x="${M.left}" y="32" class="note">${escapeXml(note)}</text>`;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" role="img"><title>${escapeXml(title)}</title><rect width="${w}" height="${h}" fill="#fff"/><text x="${M.left}" y="16" class="title">${escapeXml(title)}</text>${sub}${body}</svg>`;
}

function legend(items: { name: string; color: string; dashed?: boolean }[], right: number, y: number): string {
  const width = 26 + 6 * Math.max(0, ...items.map((it) => it.name.length));
  const x = right - width;
  let out =
    items.length === 0
      ? ''
      : `<rect x="${x - 4}" y="${y - 9}" width="${width}" height="${items.length * 15 + 4}" fill="#fff" fill-opacity="0.85" stroke="#ddd"/>`;
  items.forEach((it, i) => {
    const yy = y + i * 15;
    out += `<line x1="${x}" y1="${yy}" x2="${x + 18}" y2="${yy}" stroke="${it.color}" stroke-width="2.5"${it.dashed === true ? ' stroke-dasharray="5 3"' : ''}/><text x="${x + 22}" y="${yy + 4}" class="legend">${escapeXml(it.name)}</text>`;
  });
  return out;
}

export function lineChart(c: LineChart): string {
  const w = c.width ?? 560;
  const h = c.height ?? 340;
  const pts = c.series.flatMap((s) => s.points).filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
  if (pts.length === 0) return frame(c.title, c.note ?? 'no data', w, 80, '');
  const sx = scale(
    c.x,
    pts.map((p) => p[0]),
    M.left,
    w - M.right,
  );
  const sy = scale(
    c.y,
    pts.map((p) => p[1]),
    h - M.bottom,
    M.top,
  );
  let body = axes(c.x, c.y, sx, sy, w, h);
  for (const s of c.series) {
    const ps = s.points.filter(
      ([x, y]) =>
        Number.isFinite(x) && Number.isFinite(y) && (c.x.log !== true || x > 0) && (c.y.log !== true || y > 0),
    );
    if (ps.length === 0) continue;
    if (s.kind === 'scatter') {
      for (const [x, y] of ps) {
        const X = sx(x).toFixed(1);
        const Y = sy(y).toFixed(1);
        body +=
          s.marker === 'square'
            ? `<rect x="${+X - 3}" y="${+Y - 3}" width="6" height="6" fill="none" stroke="${s.color}" stroke-width="1.3"/>`
            : `<circle cx="${X}" cy="${Y}" r="3" fill="${s.color}" fill-opacity="0.6"/>`;
      }
      continue;
    }
    let d = '';
    ps.forEach(([x, y], i) => {
      const X = sx(x).toFixed(1);
      const Y = sy(y).toFixed(1);
      if (i === 0) d += `M${X},${Y}`;
      else if (s.kind === 'step') d += `H${X}V${Y}`;
      else d += `L${X},${Y}`;
    });
    body += `<path d="${d}" fill="none" stroke="${s.color}" stroke-width="2"${s.dashed === true ? ' stroke-dasharray="5 3"' : ''}/>`;
  }
  body += legend(
    c.series.map((s) => ({ name: s.name, color: s.color, dashed: s.dashed })),
    w - M.right - 4,
    M.top + 8,
  );
  return frame(c.title, c.note, w, h, body);
}

function axes(xa: Axis, ya: Axis, sx: Scale, sy: Scale, w: number, h: number): string {
  const fx = xa.format ?? fmt;
  const fy = ya.format ?? fmt;
  let out = `<line x1="${M.left}" y1="${h - M.bottom}" x2="${w - M.right}" y2="${h - M.bottom}" class="axis"/><line x1="${M.left}" y1="${M.top}" x2="${M.left}" y2="${h - M.bottom}" class="axis"/>`;
  for (const t of sx.ticks) {
    const X = sx(t).toFixed(1);
    out += `<line x1="${X}" y1="${M.top}" x2="${X}" y2="${h - M.bottom}" class="grid"/><text x="${X}" y="${h - M.bottom + 14}" class="tick" text-anchor="middle">${escapeXml(fx(t))}</text>`;
  }
  for (const t of sy.ticks) {
    const Y = sy(t).toFixed(1);
    out += `<line x1="${M.left}" y1="${Y}" x2="${w - M.right}" y2="${Y}" class="grid"/><text x="${M.left - 6}" y="${+Y + 4}" class="tick" text-anchor="end">${escapeXml(fy(t))}</text>`;
  }
  out += `<text x="${(M.left + w - M.right) / 2}" y="${h - 12}" class="label" text-anchor="middle">${escapeXml(xa.label)}</text>`;
  out += `<text x="14" y="${(M.top + h - M.bottom) / 2}" class="label" text-anchor="middle" transform="rotate(-90 14 ${(M.top + h - M.bottom) / 2})">${escapeXml(ya.label)}</text>`;
  return out;
}

export function barChart(c: BarChart): string {
  const w = c.width ?? 560;
  const h = c.height ?? 320;
  const all = c.groups.flatMap((g) => g.values).filter((v) => Number.isFinite(v));
  if (all.length === 0 || c.categories.length === 0) return frame(c.title, c.note ?? 'no data', w, 80, '');
  const sy = scale({ ...c.y, min: c.y.min ?? 0 }, [0, ...all], h - M.bottom, M.top);
  const fy = c.y.format ?? fmt;
  const plotW = w - M.left - M.right;
  const slot = plotW / c.categories.length;
  const barW = Math.max(2, (slot * 0.8) / Math.max(1, c.groups.length));
  let body = `<line x1="${M.left}" y1="${h - M.bottom}" x2="${w - M.right}" y2="${h - M.bottom}" class="axis"/><line x1="${M.left}" y1="${M.top}" x2="${M.left}" y2="${h - M.bottom}" class="axis"/>`;
  for (const t of sy.ticks) {
    const Y = sy(t).toFixed(1);
    body += `<line x1="${M.left}" y1="${Y}" x2="${w - M.right}" y2="${Y}" class="grid"/><text x="${M.left - 6}" y="${+Y + 4}" class="tick" text-anchor="end">${escapeXml(fy(t))}</text>`;
  }
  c.categories.forEach((cat, i) => {
    const x0 = M.left + i * slot + slot * 0.1;
    c.groups.forEach((g, k) => {
      const v = g.values[i] ?? 0;
      if (!Number.isFinite(v) || v <= 0) return;
      const y = sy(v);
      body += `<rect x="${(x0 + k * barW).toFixed(1)}" y="${y.toFixed(1)}" width="${(barW - 1).toFixed(1)}" height="${(h - M.bottom - y).toFixed(1)}" fill="${g.color}"><title>${escapeXml(`${g.name} ${cat}: ${fy(v)}`)}</title></rect>`;
    });
    body += `<text x="${(M.left + i * slot + slot / 2).toFixed(1)}" y="${h - M.bottom + 14}" class="tick" text-anchor="middle">${escapeXml(cat)}</text>`;
  });
  body += `<text x="${(M.left + w - M.right) / 2}" y="${h - 12}" class="label" text-anchor="middle">${escapeXml(c.xLabel)}</text>`;
  body += `<text x="14" y="${(M.top + h - M.bottom) / 2}" class="label" text-anchor="middle" transform="rotate(-90 14 ${(M.top + h - M.bottom) / 2})">${escapeXml(c.y.label)}</text>`;
  body += legend(
    c.groups.map((g) => ({ name: g.name, color: g.color })),
    w - M.right - 4,
    M.top + 8,
  );
  return frame(c.title, c.note, w, h, body);
}
