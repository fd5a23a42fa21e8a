// Drill: run control under load and faults (issue 25, docs/run-control.md). Every module of this folder (but
// kit.ts and index.ts) exports `checks`; each runs on the test stack in turn, and the report's table says
// check, promise, result.
import fs from 'node:fs';
import path from 'node:path';
import { getStack } from '../../harness/stack';
import { machineTable } from '../hostile-machine';
import { Findings, type DrillReport } from '../kit';
import type { AdmissionCheck } from './kit';

function loadChecks(): AdmissionCheck[] {
  const here = __dirname;
  return fs
    .readdirSync(here)
    .filter((f) => f.endsWith('.js') && f !== 'index.js' && f !== 'kit.js')
    .sort()
    .flatMap((f) => (require(path.join(here, f)) as { checks?: AdmissionCheck[] }).checks ?? []);
}

export async function admissionDrill(opts: { quick: boolean; only?: string[] }): Promise<DrillReport> {
  const findings = new Findings('admission', 'concurrent repeats, bursts over limits and a worker SIGKILL');
  const stack = getStack();
  const verdicts = [];
  for (const check of loadChecks()) {
    if (opts.only && !opts.only.includes(check.name)) continue;
    const r = await check.run({ stack, quick: opts.quick, note: (l) => findings.notes.push(`${check.name}: ${l}`) });
    findings.faults += r.faults ?? 1;
    findings.checked++;
    verdicts.push({ attack: check.name, limit: check.promise, result: r.result, held: r.held });
    findings.count(r.held ? 'held' : 'broken');
    if (!r.held) findings.violation(`${check.name}: ${r.result}`);
  }
  findings.notes.unshift(`\n${machineTable(verdicts, ['check', 'promise', 'result', 'held'])}`);
  return findings.report();
}
