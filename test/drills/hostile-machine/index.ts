// Drill: a hostile tenant tries to take the machine. Every module of this folder (but kit.ts and index.ts)
// exports `attacks`; each runs on the test stack in turn, and the report's table says attack, limit, result.
import fs from 'node:fs';
import path from 'node:path';
import { getStack } from '../../harness/stack';
import { Findings, type DrillReport } from '../kit';
import type { MachineAttack } from './kit';

function loadAttacks(): MachineAttack[] {
  const here = __dirname;
  const modules = fs
    .readdirSync(here)
    .filter((f) => f.endsWith('.js') && f !== 'index.js' && f !== 'kit.js')
    .sort();
  return modules.flatMap((f) => (require(path.join(here, f)) as { attacks?: MachineAttack[] }).attacks ?? []);
}

export interface MachineVerdict {
  attack: string;
  limit: string;
  result: string;
  held: boolean;
}

/** The drill's table; `head` names its first two columns (the admission drill's are check and promise). */
export function machineTable(verdicts: MachineVerdict[], head = ['attack', 'limit', 'result', 'held']): string {
  const rows = verdicts.map((v) => [v.attack, v.limit, v.result, v.held ? 'yes' : 'NO']);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

/**
 * `only` runs the named attacks; `except` leaves the named ones out (`npm test` leaves out the ones whose verdict
 * is a ratio of latencies, which a busy 2-core machine makes noisy: `npm run drill` runs them).
 */
export async function hostileMachineDrill(opts: {
  quick: boolean;
  only?: string[];
  except?: string[];
}): Promise<DrillReport> {
  const findings = new Findings('hostile-machine', 'a tenant tries to take memory, CPU, disk, slots or the network');
  const stack = getStack();
  const verdicts: MachineVerdict[] = [];
  for (const attack of loadAttacks()) {
    if ((opts.only && !opts.only.includes(attack.name)) || opts.except?.includes(attack.name)) continue;
    findings.faults++;
    const r = await attack.run({ stack, quick: opts.quick, note: (l) => findings.notes.push(`${attack.name}: ${l}`) });
    findings.checked++;
    verdicts.push({ attack: attack.name, limit: attack.limit, result: r.result, held: r.held });
    findings.count(r.held ? 'held' : 'broken');
    if (!r.held) findings.violation(`${attack.name}: ${r.result}`);
  }
  findings.notes.unshift(`\n${machineTable(verdicts)}`);
  return findings.report();
}
