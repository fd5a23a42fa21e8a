// One attack on the machine (not on another tenant's data): a hostile organization tries to take memory,
// CPU, processes, disk, slots, file handles or the host's network away from everyone else, through the
// public api only. Each attack is a module of this folder exporting `attacks: MachineAttack[]`; the drill
// (index.ts) runs every module it finds, bounded so that the machine survives, and prints one table:
// attack, limit, result.
import fs from 'node:fs';
import type { Stack } from '../../harness/stack';

export interface MachineAttackContext {
  stack: Stack;
  /** Notes for the drill's report (measurements worth printing). */
  note(line: string): void;
  /** `quick` inside `npm test`: smaller sizes, same verdicts. */
  quick: boolean;
}

export interface MachineAttackResult {
  /** True when the platform held: the limit stopped the attack and nobody else was harmed. */
  held: boolean;
  /** What was measured ("worker RSS +38 MB through a 5 GiB bomb; refused: InvalidArchive"). */
  result: string;
}

export interface MachineAttack {
  /** Short, stable name ("archive-bomb", "cpu-storm"). */
  name: string;
  /** The limit that answers it, with its setting ("BUILD_DISK_MB=1024"). */
  limit: string;
  /** Runs the attack against the stack; throws only when the drill itself broke. */
  run(ctx: MachineAttackContext): Promise<MachineAttackResult>;
}

const rssOf = (pid: number, field: 'VmRSS' | 'VmHWM') =>
  Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) *
  1024;

/** A process's peak RSS growth while `work` runs: VmHWM after a reset (clear_refs), else sampled VmRSS. */
export async function rssGrowthDuring<T>(pid: number, work: () => Promise<T>): Promise<{ value: T; growth: number }> {
  const baseline = rssOf(pid, 'VmRSS');
  let reset = true;
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
  } catch {
    reset = false;
  }
  let sampled = baseline;
  const sampler = setInterval(() => (sampled = Math.max(sampled, rssOf(pid, 'VmRSS'))), 50);
  try {
    const value = await work();
    const peak = Math.max(sampled, reset ? rssOf(pid, 'VmHWM') : 0);
    return { value, growth: peak - baseline };
  } finally {
    clearInterval(sampler);
  }
}
