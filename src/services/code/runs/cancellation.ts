// Cancelling runs of any kind: the api sends the workflow's `cancel` signal (with who asked) and waits,
// bounded, for the workflow to record the end. The api never writes a run's status itself.
import type { Client } from '@temporalio/client';
import type { DataSource } from 'typeorm';
import type { Caller } from '../../caller';
import { conflict } from '../../../errors';
import { Run, RunKind, RunStatus } from '../../../persistence/entities/run';
import { isTerminal, readRun } from './lifecycle';
import { signalCancel as signalResourceCancel, waitFor } from '../../../temporal/workflow-records';
import { runWakeUps, type RunUpdatesHub } from '../../../persistence/run-updates-hub';

/** How long a cancel waits for the workflow to record the end before answering with the current record. */
const CANCEL_WAIT_MS = 10_000;
/** How long a delete waits for the open runs it stopped to record their end before deleting anyway. */
const DELETE_STOP_WAIT_MS = 5_000;
export const OPEN_RUN_STATUSES: RunStatus[] = ['QUEUED', 'STARTING', 'RUNNING'];

interface CancelDeps {
  ds: DataSource;
  temporal: Client;
  runUpdates?: RunUpdatesHub;
}

/** Sends `cancel` to the run's workflow (signalCancel of workflow-records). */
export const signalCancel = (temporal: Client, run: { run_id: string; kind: RunKind }, requestedBy: string) =>
  signalResourceCancel(temporal, `${run.kind}-run`, run.run_id, requestedBy);

/**
 * Cancels `run` and answers once its workflow recorded the end (bounded wait; then the current record).
 * Already CANCELLED: answered as is. Ended otherwise (before or during the wait): 409.
 */
export async function cancelRunAndWait(deps: CancelDeps, caller: Caller, run: Run): Promise<Run> {
  const refuseIfEnded = (r: Run) => {
    if (isTerminal(r.status) && r.status !== 'CANCELLED') throw conflict(`This run already ended: ${r.status}`);
  };
  if (run.status === 'CANCELLED') return run;
  refuseIfEnded(run);
  await signalCancel(deps.temporal, run, caller.actor);
  const settled = await waitFor(
    () => readRun(deps.ds, run.run_id),
    (r) => isTerminal(r.status),
    CANCEL_WAIT_MS,
    runWakeUps(deps.runUpdates, run.run_id),
  );
  refuseIfEnded(settled);
  return settled;
}

/**
 * Before a resource is deleted with its runs: cancels its open runs (as a cancel request by the caller),
 * so their workflows stop what they run and record CANCELLED, and waits (bounded) for those ends.
 */
export async function stopOpenRuns(
  deps: CancelDeps,
  caller: Caller,
  open: Array<{ run_id: string; kind: RunKind }>,
): Promise<void> {
  if (!open.length) return;
  await Promise.all(open.map((r) => signalCancel(deps.temporal, r, caller.actor)));
  await waitFor(
    async () =>
      Number(
        (
          await deps.ds.query(`SELECT count(*) AS n FROM runs WHERE run_id = ANY($1) AND status = ANY($2)`, [
            open.map((r) => r.run_id),
            OPEN_RUN_STATUSES,
          ])
        )[0].n,
      ),
    (n) => n === 0,
    DELETE_STOP_WAIT_MS,
  );
}
