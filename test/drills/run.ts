// `npm run drill [-- <name>...]`: starts the test stack (embedded PostgreSQL, Temporal dev server, worker,
// api; all on loopback, in a temporary directory), runs the drills at full size one after the other, stops
// everything, checks that no process was left behind, prints the summary table. Exit code 0 only when every
// drill passed and nothing was lost.
import { DRILLS } from './index';
import { descendantsOf, DrillReport } from './kit';
import { killDrillProcesses } from './processes';
import { summaryTable } from './summary';
import { verdictTable, type Verdicts } from './hostile-tenant';
import { startStack, stopStack } from '../harness/stack';

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  if (args.includes('--list') || args.includes('--help')) {
    for (const d of DRILLS) console.log(`${d.name.padEnd(18)} ${d.summary}`);
    return 0;
  }
  const unknown = args.filter((a) => !DRILLS.some((d) => d.name === a));
  if (unknown.length) {
    console.error(`unknown drill ${unknown.join(', ')}; drills: ${DRILLS.map((d) => d.name).join(', ')}`);
    return 2;
  }
  const chosen = args.length ? DRILLS.filter((d) => args.includes(d.name)) : DRILLS;

  // Drills that start what they need themselves (the cluster drill) run without the test stack.
  const needsStack = chosen.some((d) => !d.standalone);
  if (needsStack) console.log('starting the stack (embedded PostgreSQL, Temporal dev server, worker, api)...');
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    killDrillProcesses();
    if (needsStack) await stopStack();
  };
  process.once('SIGINT', () => void stop().then(() => process.exit(130)));
  process.once('SIGTERM', () => void stop().then(() => process.exit(143)));
  const reports: DrillReport[] = [];
  try {
    if (needsStack) await startStack();
    for (const d of chosen) {
      console.log(`\n== ${d.name}: ${d.summary}`);
      const started = Date.now();
      try {
        const r = await d.full();
        reports.push(r);
        // The hostile-tenant drills say what each attack met.
        if ('verdicts' in r) console.log(`\n${verdictTable((r as { verdicts: Verdicts }).verdicts)}\n`);
        console.log(
          `   ${r.violations.length ? `${r.violations.length} findings` : 'ok'} (${((Date.now() - started) / 1000).toFixed(1)} s)`,
        );
      } catch (err) {
        // The drill could not run to its end: a failure, with what stopped it.
        reports.push({
          name: d.name,
          fault: d.summary,
          faults: 0,
          checked: 0,
          lost: 0,
          duplicated: 0,
          notes: [],
          facts: {},
          violations: [`the drill failed: ${err instanceof Error ? err.message : String(err)}`],
          ms: Date.now() - started,
        });
        console.log(`   failed: ${err instanceof Error ? err.stack : String(err)}`);
      }
    }
  } finally {
    await stop();
  }
  // Everything this process started must be gone now (the stack, drill processes, run processes).
  const left = descendantsOf(process.pid);
  console.log(`\n${summaryTable(reports)}\n`);
  console.log(
    left.length
      ? `processes left behind: ${left.map((p) => `${p.pid} ${p.command}`).join('; ')}`
      : 'processes left behind: none',
  );
  const ok = left.length === 0 && reports.every((r) => r.lost === 0 && r.duplicated === 0 && r.violations.length === 0);
  return ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
