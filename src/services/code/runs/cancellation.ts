// Cancelling runs of any kind, through the job kernel (src/jobs/cancel.ts): the api sends the workflow's
// `cancel` signal (with who asked) and waits, bounded, for the workflow to record the end.
import type { Client } from '@temporalio/client';
import type { DataSource } from 'typeorm';
import type { Caller } from '../../caller';
import { cancelAndWait, signalCancel as signalJobCancel, stopOpen } from '../../../jobs/cancel';
import { RUN_JOB } from '../../../jobs/kinds';
import { Run, RunKind, RunStatus } from '../../../persistence/entities/run';
import { readRun } from './lifecycle';
import { runWakeUps, type RunUpdatesHub } from '../../../persistence/run-updates-hub';

export const OPEN_RUN_STATUSES = RUN_JOB.open as RunStatus[];

interface CancelDeps {
  ds: DataSource;
  temporal: Client;
  runUpdates?: RunUpdatesHub;
}

/** Sends `cancel` to the run's workflow (the job kernel's signalCancel). */
export const signalCancel = (temporal: Client, run: { run_id: string; kind: RunKind }, requestedBy: string) =>
  signalJobCancel(temporal, RUN_JOB, run, requestedBy);

/**
 * Cancels `run` and answers once its workflow recorded the end (the job kernel's cancelAndWait, woken by the
 * run's notifications). Already CANCELLED: answered as is. Ended otherwise (before or during the wait): 409.
 */
export const cancelRunAndWait = (deps: CancelDeps, caller: Caller, run: Run): Promise<Run> =>
  cancelAndWait(deps.temporal, RUN_JOB, run, {
    requestedBy: caller.actor,
    read: () => readRun(deps.ds, run.run_id),
    wakeUps: runWakeUps(deps.runUpdates, run.run_id),
  });

/**
 * Before a resource is deleted with its runs: cancels its open runs (as a cancel request by the caller),
 * so their workflows stop what they run and record CANCELLED, and waits (bounded) for those ends.
 */
export const stopOpenRuns = (deps: CancelDeps, caller: Caller, open: Array<{ run_id: string; kind: RunKind }>) =>
  stopOpen(deps, RUN_JOB, open, caller.actor);
