// Summaries and the printed form of every benchmark: a table per benchmark and `ratio` lines comparing
// our path with its bare baseline (ours / bare: above 1 means ours takes longer or does less per second).

export interface Summary {
  n: number;
  p50: number;
  p99: number;
  mean: number;
  max: number;
}

/** Nearest-rank percentile of sorted values (p in 0..100). */
export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

export function summarize(values: number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  const mean = sorted.reduce((s, v) => s + v, 0) / (sorted.length || 1);
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    mean,
    max: sorted[sorted.length - 1] ?? NaN,
  };
}

/** A number for a table cell: few significant digits, no exponent. */
export function fmt(v: number | undefined, digits = 1): string {
  if (v === undefined || Number.isNaN(v)) return '-';
  if (Math.abs(v) >= 100) return v.toFixed(0);
  return v.toFixed(digits);
}

export function table(title: string, header: string[], rows: Array<Array<string | number>>): string {
  const cells = [header, ...rows.map((r) => r.map((c) => (typeof c === 'number' ? fmt(c) : c)))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [
    `\n## ${title}`,
    line(cells[0]),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...cells.slice(1).map(line),
  ].join('\n');
}

export interface Ratio {
  bench: string;
  metric: string;
  ours: number;
  /** The baseline's value (bare's, or isolated bare's: see `baseline`). */
  bare: number;
  unit: string;
  /** Which baseline `bare` is; unset: bare. */
  baseline?: 'isolated bare';
}

export const ratioOf = (r: Ratio) => r.ours / r.bare;

export function ratioLine(r: Ratio): string {
  const base = r.baseline ?? 'bare';
  return `ratio ${r.bench}: ${r.metric} ours/${base} = ${ratioOf(r).toFixed(2)} (ours ${fmt(r.ours, 2)} ${r.unit}, ${base} ${fmt(r.bare, 2)} ${r.unit})`;
}

/** The ratio of `metric` against each baseline measured: bare, then isolated bare where there is one. */
export function ratiosOf(
  bench: string,
  metric: string,
  unit: string,
  ours: number,
  baselines: { bare: number; isolated?: number },
): Ratio[] {
  return [
    { bench, metric, ours, bare: baselines.bare, unit },
    ...(baselines.isolated !== undefined
      ? [{ bench, metric, ours, bare: baselines.isolated, unit, baseline: 'isolated bare' as const }]
      : []),
  ];
}

/** An absolute number with a goal of its own (memory, event-loop delay, errors), printed as a `figure` line. */
export interface Figure {
  bench: string;
  metric: string;
  value: number;
  unit: string;
  /** The goal, as text ("< 300 MB"), and whether this value meets it. */
  goal?: string;
  met?: boolean;
}

export function figureLine(f: Figure): string {
  const goal = f.goal ? ` (goal ${f.goal}: ${f.met ? 'met' : 'NOT met'})` : '';
  return `figure ${f.bench}: ${f.metric} = ${fmt(f.value, 2)} ${f.unit}${goal}`;
}

/** A figure checked against an upper bound (`below`: strictly less; otherwise at most). */
export function figure(
  bench: string,
  metric: string,
  value: number,
  unit: string,
  bound?: { max: number; below?: boolean },
): Figure {
  if (!bound) return { bench, metric, value, unit };
  return {
    bench,
    metric,
    value,
    unit,
    goal: `${bound.below ? '<' : '≤'} ${bound.max} ${unit}`.trim(),
    met: bound.below ? value < bound.max : value <= bound.max,
  };
}

/** What a benchmark hands back to the runner: its printed tables and ratios, and raw numbers for --json. */
export interface BenchReport {
  name: string;
  tables: string[];
  ratios: Ratio[];
  figures?: Figure[];
  notes: string[];
  data: Record<string, unknown>;
}

export function printReport(report: BenchReport): void {
  for (const t of report.tables) console.log(t);
  for (const n of report.notes) console.log(`note: ${n}`);
  console.log('');
  for (const r of report.ratios) console.log(ratioLine(r));
  for (const f of report.figures ?? []) console.log(figureLine(f));
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `fn` over `items` with at most `limit` in flight; results in input order. */
export async function pool<T, R>(items: T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i], i);
    }
  });
  await Promise.all(lanes);
  return out;
}
