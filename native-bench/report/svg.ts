/**
 * Inline SVG charts for the HTML report, drawn by hand (no library, no CDN):
 * a line chart (numeric or categorical x, linear or log y) and a bar chart
 * (grouped or stacked, linear or log y). Output is a self-contained <svg>.
 */

export interface LineSeries {
  name: string;
  points: [number, number][];
}

export interface BarSeries {
  name: string;
  values: number[];
}

const W = 800;
const H = 340;
const M = { l: 70, r: 250, t: 34, b: 58 };
const COLORS = ['#d62728', '#1f77b4', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#e377c2', '#7f7f7f'];

export function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function short(x: number): string {
  const a = Math.abs(x);
  if (a >= 1e6) return `${+(x / 1e6).toPrecision(3)}M`;
  if (a >= 1e3) return `${+(x / 1e3).toPrecision(3)}k`;
  if (a < 1e-3) return '0';
  return `${+x.toPrecision(3)}`;
}

interface Scale {
  map(v: number): number;
  ticks: number[];
}

function yScale(values: number[], log: boolean, top: number, bottom: number): Scale {
  const pos = values.filter((v) => v > 0 && Number.isFinite(v));
  if (log && pos.length > 0) {
    const lo = Math.floor(Math.log10(Math.min(...pos)));
    const hi = Math.max(lo + 1, Math.ceil(Math.log10(Math.max(...pos))));
    const ticks: number[] = [];
    for (let e = lo; e <= hi; e++) ticks.push(10 ** e);
    return { map: (v) => bottom - ((Math.log10(Math.max(v, 10 ** lo)) - lo) / (hi - lo)) * (bottom - top), ticks };
  }
  // An all-zero series still gets a readable 0..1 axis (not six ticks all labelled 0).
  const finite = values.filter((v) => Number.isFinite(v));
  const max = finite.some((v) => v > 0) ? Math.max(...finite) : 1;
  const step = 10 ** Math.floor(Math.log10(max / 4));
  const nice = [1, 2, 5, 10].map((k) => k * step).find((s) => max / s <= 6) ?? step * 10;
  const hi = Math.ceil(max / nice) * nice;
  const ticks: number[] = [];
  for (let v = 0; v <= hi + nice / 2; v += nice) ticks.push(v);
  return { map: (v) => bottom - (Math.max(0, v) / hi) * (bottom - top), ticks };
}

function frame(title: string, yLabel: string, xLabel: string, y: Scale, logY: boolean): string {
  const parts = [`<text x="${W / 2 - M.r / 2}" y="20" text-anchor="middle" font-weight="bold">${esc(title)}</text>`];
  for (const t of y.ticks) {
    const py = y.map(t);
    parts.push(
      `<line x1="${M.l}" x2="${W - M.r}" y1="${py}" y2="${py}" stroke="#ddd"/><text x="${M.l - 6}" y="${py + 4}" text-anchor="end">${short(t)}</text>`,
    );
  }
  parts.push(
    `<line x1="${M.l}" x2="${M.l}" y1="${M.t}" y2="${H - M.b}" stroke="#333"/><line x1="${M.l}" x2="${W - M.r}" y1="${H - M.b}" y2="${H - M.b}" stroke="#333"/>`,
  );
  parts.push(
    `<text transform="translate(16 ${(M.t + H - M.b) / 2}) rotate(-90)" text-anchor="middle">${esc(yLabel)}${logY ? ' (log)' : ''}</text>`,
  );
  parts.push(`<text x="${(M.l + W - M.r) / 2}" y="${H - 12}" text-anchor="middle">${esc(xLabel)}</text>`);
  return parts.join('');
}

function legend(names: string[]): string {
  return names
    .map(
      (n, i) =>
        `<rect x="${W - M.r + 12}" y="${M.t + i * 18}" width="12" height="12" fill="${COLORS[i % COLORS.length]}"/><text x="${W - M.r + 30}" y="${M.t + i * 18 + 10}">${esc(n.length > 38 ? n.slice(0, 37) + '…' : n)}</text>`,
    )
    .join('');
}

function svg(body: string): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" font-family="sans-serif" font-size="11">${body}</svg>`;
}

/** x is numeric, or an index into xCategories when given. */
export function lineChart(o: {
  title: string;
  xLabel: string;
  yLabel: string;
  series: LineSeries[];
  logY?: boolean;
  xCategories?: string[];
}): string {
  const ys = o.series.flatMap((s) => s.points.map((p) => p[1]));
  if (ys.length === 0) return '';
  const y = yScale(ys, o.logY === true, M.t, H - M.b);
  const xs = o.series.flatMap((s) => s.points.map((p) => p[0]));
  const cats = o.xCategories;
  const xMin = cats ? 0 : Math.min(...xs);
  const xMax = cats ? Math.max(1, cats.length - 1) : Math.max(xMin + 1e-9, ...xs);
  const mx = (v: number): number => M.l + 10 + ((v - xMin) / (xMax - xMin)) * (W - M.r - M.l - 20);
  const parts = [frame(o.title, o.yLabel, o.xLabel, y, o.logY === true)];
  const xt = cats
    ? cats.map((c, i) => [i, c] as const)
    : [0, 0.25, 0.5, 0.75, 1].map((f) => [xMin + f * (xMax - xMin), short(xMin + f * (xMax - xMin))] as const);
  for (const [v, label] of xt)
    parts.push(`<text x="${mx(v)}" y="${H - M.b + 16}" text-anchor="middle">${esc(String(label))}</text>`);
  o.series.forEach((s, i) => {
    const c = COLORS[i % COLORS.length];
    const pts = s.points.map((p) => `${mx(p[0]).toFixed(1)},${y.map(p[1]).toFixed(1)}`);
    parts.push(`<polyline fill="none" stroke="${c}" stroke-width="2" points="${pts.join(' ')}"/>`);
    if (s.points.length <= 40)
      for (const p of s.points)
        parts.push(
          `<circle cx="${mx(p[0]).toFixed(1)}" cy="${y.map(p[1]).toFixed(1)}" r="3" fill="${c}"><title>${esc(`${s.name}: ${short(p[1])}`)}</title></circle>`,
        );
  });
  parts.push(legend(o.series.map((s) => s.name)));
  return svg(parts.join(''));
}

export function barChart(o: {
  title: string;
  yLabel: string;
  xLabel?: string;
  categories: string[];
  series: BarSeries[];
  stacked?: boolean;
  logY?: boolean;
}): string {
  if (o.categories.length === 0 || o.series.length === 0) return '';
  const totals = o.categories.map((_, i) =>
    o.stacked
      ? o.series.reduce((a, s) => a + Math.max(0, s.values[i] ?? 0), 0)
      : Math.max(...o.series.map((s) => s.values[i] ?? 0)),
  );
  const y = yScale(o.stacked ? totals : o.series.flatMap((s) => s.values), o.logY === true && !o.stacked, M.t, H - M.b);
  const parts = [frame(o.title, o.yLabel, o.xLabel ?? '', y, o.logY === true && !o.stacked)];
  const slot = (W - M.r - M.l) / o.categories.length;
  const barW = o.stacked ? slot * 0.6 : (slot * 0.8) / o.series.length;
  o.categories.forEach((cat, i) => {
    const x0 = M.l + i * slot + slot * (o.stacked ? 0.2 : 0.1);
    let acc = 0;
    o.series.forEach((s, k) => {
      const v = Math.max(0, s.values[i] ?? 0);
      const c = COLORS[k % COLORS.length];
      const tip = `<title>${esc(`${cat} ${s.name}: ${short(v)}`)}</title>`;
      if (o.stacked) {
        const bottom = y.map(acc);
        const top = y.map(acc + v);
        acc += v;
        parts.push(
          `<rect x="${x0.toFixed(1)}" y="${top.toFixed(1)}" width="${barW.toFixed(1)}" height="${Math.max(0, bottom - top).toFixed(1)}" fill="${c}">${tip}</rect>`,
        );
      } else {
        const top = y.map(v);
        parts.push(
          `<rect x="${(x0 + k * barW).toFixed(1)}" y="${top.toFixed(1)}" width="${(barW * 0.92).toFixed(1)}" height="${Math.max(0, H - M.b - top).toFixed(1)}" fill="${c}">${tip}</rect>`,
        );
      }
    });
    parts.push(
      `<text x="${(M.l + i * slot + slot / 2).toFixed(1)}" y="${H - M.b + 16}" text-anchor="middle">${esc(cat.length > 18 ? cat.slice(0, 17) + '…' : cat)}</text>`,
    );
  });
  parts.push(legend(o.series.map((s) => s.name)));
  return svg(parts.join(''));
}
