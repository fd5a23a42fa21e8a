// One attack on the machine (not on another tenant's data): a hostile organization tries to take memory,
// CPU, processes, disk, slots, file handles or the host's network away from everyone else, through the
// public api only. Each attack is a module of this folder exporting `attacks: MachineAttack[]`; the drill
// (index.ts) runs every module it finds, bounded so that the machine survives, and prints one table:
// attack, limit, result.
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
