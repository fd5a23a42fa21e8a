// One check of run control (docs/run-control.md): how work is admitted and recovered, through the public api
// of the stack, with faults where the check says (two api processes, a worker SIGKILL). Each check is a module
// of this folder exporting `checks: AdmissionCheck[]`; the drill (index.ts) runs every module it finds, bounded,
// and prints one table: check, promise, result.
import type { Stack } from '../../harness/stack';

export interface AdmissionContext {
  stack: Stack;
  /** Notes for the drill's report (measurements worth printing). */
  note(line: string): void;
  /** `quick` inside `npm test`: smaller sizes, same verdicts. */
  quick: boolean;
}

export interface AdmissionResult {
  /** True when every promise of the check held. */
  held: boolean;
  /** What was measured ("1,000 creates with 100 keys through 2 apis: 100 runs"). */
  result: string;
  /** Faults injected (kills, concurrent repeats): the report's fault count. */
  faults?: number;
}

export interface AdmissionCheck {
  /** Short, stable name ("idempotency", "rate-limit"). */
  name: string;
  /** The promise checked ("100 keys make exactly 100 runs"). */
  promise: string;
  /** Runs the check against the stack; throws only when the drill itself broke. */
  run(ctx: AdmissionContext): Promise<AdmissionResult>;
}
