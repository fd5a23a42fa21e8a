// The NOTIFY protocol of run updates: written by the run state writers (src/services/code/runs/state.ts),
// read by every api process (run-updates-hub.ts), so it lives on the floor both stand on.

/**
 * NOTIFY channel; payload `<run id> <epoch seconds of the writer's transaction start>` (parseRunPayload). Sent on
 * every event, log batch and status change of a run. The time (the NOTIFY lag metric) is the transaction's, so
 * the notifications of one run in one transaction are still folded into one by PostgreSQL.
 */
export const RUN_CHANNEL = 'run_updates';

/** The run id and the sending transaction's start (epoch ms, if present) of a `run_updates` payload. */
export function parseRunPayload(payload: string): { runId: string; sentAtMs?: number } {
  const [runId, at] = payload.split(' ');
  const seconds = Number(at);
  return at && Number.isFinite(seconds) ? { runId, sentAtMs: seconds * 1000 } : { runId };
}
