// The sandbox chain alone, as a benchmark of `npm run bench`: sandbox-spawn.ts (one sandboxed /bin/true after
// another through the path a run takes, every process's CPU counted by a subreaper) run as a child, its figures
// reported with their goals: CPU of every process per spawn ≤ 25 ms, the chain's p50 (spawn → exited) ≤ 15 ms.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import type { BenchContext } from './support/context';
import { BenchReport, figure } from './support/stats';

const SPAWNS = 50;

/** The number after `label` on a line of sandbox-spawn's output (its p50, or its CPU per spawn). */
function numberAfter(output: string, label: string, pattern = /p50\s+([\d.]+)/): number {
  const line = output.split('\n').find((l) => l.startsWith(label));
  const m = line ? pattern.exec(line.slice(label.length)) : null;
  if (!m) throw new Error(`sandbox-spawn printed no "${label}":\n${output}`);
  return Number(m[1]);
}

export async function sandboxChain(ctx: BenchContext): Promise<BenchReport> {
  if (!ctx.isolated) {
    return {
      name: 'sandbox-chain',
      tables: [],
      ratios: [],
      notes: ['SANDBOX=off here: no chain to measure'],
      data: {},
    };
  }
  const script = path.join(__dirname, 'sandbox-spawn.js');
  const { stdout } = await promisify(execFile)(process.execPath, [script, `--runs=${SPAWNS}`, '--steps'], {
    maxBuffer: 1 << 22,
  });
  const chainP50 = numberAfter(stdout, 'spawn → exited (the whole chain)');
  const identityP50 = numberAfter(stdout, 'identity (uid lease, cgroup)');
  const cpu = numberAfter(stdout, 'CPU of every process per spawn', /:\s+([\d.]+) ms/);
  const steps = stdout.split('\n').filter((l) => l.startsWith('  step: '));
  return {
    name: 'sandbox-chain',
    tables: [`\n## sandbox-chain: ${SPAWNS} × /bin/true through the chain of a run (bench/sandbox-spawn.ts)`, ...steps],
    ratios: [],
    figures: [
      figure('sandbox-chain', 'CPU of every process per spawn', cpu, 'ms', { max: 25 }),
      figure('sandbox-chain', 'spawn → exited p50 (the whole chain)', chainP50, 'ms', { max: 15 }),
      figure('sandbox-chain', 'identity p50 (uid lease, control group)', identityP50, 'ms'),
    ],
    notes: ["CPU per spawn includes the measuring script's own share (its spawns and reads)"],
    data: { output: stdout },
  };
}
