// `node dist/bench/compare.js a.json b.json`: the ratios (ours/bare) and figures of two `npm run bench --
// --json` runs side by side, with b relative to a. A ratio or figure only one run has shows "-" for the other.
import fs from 'node:fs';
import type { Figure, Ratio } from './support/stats';

interface Run {
  at: string;
  shape?: string;
  load?: { before: number[]; after: number[] };
  reports: Array<{ ratios: Ratio[]; figures?: Figure[] }>;
}

const num = (v: number | undefined) =>
  v === undefined || Number.isNaN(v) ? '-' : v >= 100 ? v.toFixed(0) : v.toFixed(2);

function values(run: Run): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of run.reports) {
    for (const x of r.ratios) out.set(`ratio ${x.bench}: ${x.metric} ours/${x.baseline ?? 'bare'}`, x.ours / x.bare);
    for (const f of r.figures ?? []) out.set(`figure ${f.bench}: ${f.metric}${f.unit ? ` (${f.unit})` : ''}`, f.value);
  }
  return out;
}

function main(): void {
  const [fa, fb] = process.argv.slice(2);
  if (!fa || !fb) {
    console.error('usage: node dist/bench/compare.js a.json b.json');
    process.exit(2);
  }
  const [a, b] = [fa, fb].map((f) => JSON.parse(fs.readFileSync(f, 'utf8')) as Run);
  const [va, vb] = [values(a), values(b)];
  const names = [...new Set([...va.keys(), ...vb.keys()])];
  const width = Math.max(...names.map((n) => n.length), 4);
  const load = (r: Run) => (r.load ? `load ${r.load.before[0].toFixed(1)}→${r.load.after[0].toFixed(1)}` : '');
  console.log(`a: ${fa} (${a.at}, ${a.shape ?? 'inprocess'}, ${load(a)})`);
  console.log(`b: ${fb} (${b.at}, ${b.shape ?? 'inprocess'}, ${load(b)})`);
  console.log(`${'name'.padEnd(width)}  ${'a'.padStart(8)}  ${'b'.padStart(8)}  ${'b/a'.padStart(6)}`);
  for (const n of names) {
    const x = va.get(n);
    const y = vb.get(n);
    const rel = x !== undefined && y !== undefined && x !== 0 ? num(y / x) : '-';
    console.log(`${n.padEnd(width)}  ${num(x).padStart(8)}  ${num(y).padStart(8)}  ${rel.padStart(6)}`);
  }
}

main();
