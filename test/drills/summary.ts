// The summary table of a set of drill reports: faults injected, what was checked, and data lost (which must
// read zero), then each drill's measurements and findings.
import { DrillReport, passed } from './kit';

export function summaryTable(reports: DrillReport[]): string {
  const rows = reports.map((r) => [
    r.name,
    r.fault,
    String(r.faults),
    String(r.checked),
    String(r.lost),
    String(r.duplicated),
    String(r.violations.length),
    `${(r.ms / 1000).toFixed(1)} s`,
    passed(r) ? 'PASS' : 'FAIL',
  ]);
  const head = [
    'drill',
    'fault injected',
    'faults',
    'checked',
    'lost',
    'duplicated',
    'other findings',
    'time',
    'result',
  ];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => (i >= 2 && i <= 7 ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join(' | ')} |`;
  const lost = reports.reduce((n, r) => n + r.lost + r.duplicated, 0);
  const out = [
    line(head),
    `|${widths.map((w, i) => (i >= 2 && i <= 7 ? `${'-'.repeat(w + 1)}:` : `:${'-'.repeat(w + 1)}`)).join('|')}|`,
    ...rows.map(line),
    '',
    `data lost: ${lost} (records lost or duplicated, over ${reports.length} drills); ${reports.filter(passed).length} of ${reports.length} drills passed`,
  ];
  for (const r of reports) {
    if (!r.notes.length && !r.violations.length) continue;
    out.push('', `${r.name}:`);
    for (const n of r.notes) out.push(`  - ${n}`);
    for (const v of r.violations) out.push(`  ! ${v}`);
  }
  return out.join('\n');
}
