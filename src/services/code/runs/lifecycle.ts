// The status changes of a structure run, each with its SYSTEM event in the same transaction (through
// state.ts, the only writer). Called by the run workflow's activities; every one is idempotent.
import type { DataSource, EntityManager } from 'typeorm';
import { iso } from '../../../persistence/scoped';
import { Run, RUN_TERMINAL, RunStatus, type RunLimits } from '../../../persistence/entities/run';
import { appendEvents, transitionRun } from './state';
import { RUN_JOB } from '../../../jobs/kinds';
import { startJob, startJobIn } from '../../../jobs/start';
import { findOnePrepared, queryPrepared } from '../../../persistence/direct-sql';
import type { LostOutput } from '../../../runtime/process/log-pump';
import type { RunEnding } from '../../../temporal/contracts';

export const isTerminal = (status: RunStatus) => RUN_TERMINAL.includes(status);

/** A run by id (a prepared read): what the waits for a run's end re-read on every wake-up. */
export async function readRun(ds: DataSource, runId: string): Promise<Run> {
  const run = await findOnePrepared(ds, Run, { run_id: runId });
  if (!run) throw new Error(`run ${runId} does not exist`);
  return run;
}

const STARTING_EVENTS = [{ type: 'StructureRunStarting', origin: 'SYSTEM' as const, payload: { status: 'STARTING' } }];

/**
 * QUEUED → STARTING with its SYSTEM event (the job kernel's start: it waits for the row's commit). Returns
 * the run's status afterwards, or undefined when the row never became visible.
 */
export const markStarting = (ds: DataSource, runId: string) =>
  startJob(ds, RUN_JOB, runId, STARTING_EVENTS) as Promise<RunStatus | undefined>;

/** `markStarting` within the transaction that admits the run (its execution slot's, src/jobs/admission.ts). */
export const markStartingIn = (em: EntityManager, runId: string) =>
  startJobIn(em, RUN_JOB, runId, STARTING_EVENTS) as Promise<RunStatus | undefined>;

/**
 * Claims the execution of a STARTING run for `attempt` of the execute activity, before its process is
 * spawned. False when another attempt claimed it first: that attempt may have started (or be starting) the
 * user's code, which must not run twice. Repeatable by the same attempt. `runAttempt`: the run's attempt (its
 * retry policy's) the activity executes; a later one (the run was retried meanwhile) cannot be claimed by it.
 */
export async function claimExecution(
  ds: DataSource,
  runId: string,
  attempt: number,
  runAttempt: number,
): Promise<boolean> {
  // TypeORM answers an UPDATE as [rows, count].
  const [rows]: [Array<{ execution_attempt: number }>, number] = await queryPrepared(
    ds,
    `UPDATE runs SET execution_attempt = $2
      WHERE run_id = $1 AND status = 'STARTING' AND attempt = $3
        AND (execution_attempt IS NULL OR execution_attempt = $2)
      RETURNING execution_attempt`,
    [runId, attempt, runAttempt],
  );
  return rows.length > 0;
}

/**
 * Records how the process of the run's attempt `runAttempt` ended, as the execute activity answers it.
 * Temporal may never get that answer (the worker gives up on it after ~10 s unreachable): the activity's retry
 * then finds the run RUNNING, and answers this ending (`recordedEnding`) rather than WorkerLost. Cleared when the
 * run ends (the run kind's `onEnd`) and when a retry policy starts the next attempt.
 */
export async function recordEnding(ds: DataSource, runId: string, runAttempt: number, ending: RunEnding) {
  await queryPrepared(
    ds,
    `UPDATE runs SET execution_ending = $3::jsonb WHERE run_id = $1 AND status = 'RUNNING' AND attempt = $2`,
    [runId, runAttempt, JSON.stringify(ending)],
  );
}

/** The ending recorded for the run's attempt `runAttempt` (`recordEnding`), if any. */
export async function recordedEnding(ds: DataSource, runId: string, runAttempt: number) {
  const rows: Array<{ execution_ending: RunEnding | null }> = await queryPrepared(
    ds,
    `SELECT execution_ending FROM runs WHERE run_id = $1 AND attempt = $2`,
    [runId, runAttempt],
  );
  return rows[0]?.execution_ending ?? undefined;
}

/**
 * → RUNNING once the process of the run's attempt `runAttempt` has started; false when the run already ended
 * or went on to a later attempt (then stop the process).
 * Repeatable: a retry after a commit whose answer was lost finds the run RUNNING since this `startedAt`.
 * `limits`: what the worker enforces on it (limits.ts `recordedLimits`), recorded with RUNNING.
 */
export async function markRunning(
  ds: DataSource,
  runId: string,
  startedAt: Date,
  runAttempt?: number,
  limits?: RunLimits,
): Promise<boolean> {
  // One statement: the move and its event (no transaction of its own).
  const fence = runAttempt === undefined ? undefined : `attempt = ${Number(runAttempt)}`;
  const running = { status: 'RUNNING', started_at: iso(startedAt) };
  const moved = await transitionRun(ds.manager, runId, 'RUNNING', { started_at: startedAt, limits }, fence, [
    { type: 'StructureRunRunning', origin: 'SYSTEM', payload: running },
  ]);
  if (moved) return true;
  const rows: Array<{ status: RunStatus; started_at: Date | null }> = await queryPrepared(
    ds,
    `SELECT status, started_at FROM runs WHERE run_id = $1`,
    [runId],
  );
  return rows[0]?.status === 'RUNNING' && rows[0].started_at?.getTime() === startedAt.getTime();
}

/** The ending with `lost` recorded on it (when anything was lost and the ending can carry it). */
export function withLostOutput(ending: RunEnding, lost: LostOutput | undefined): RunEnding {
  return lost && ending.status !== 'CANCELLED' ? { ...ending, outputLost: lost } : ending;
}

function statusDetailOf(ending: RunEnding): Record<string, unknown> {
  if (ending.status === 'CANCELLED')
    return { reason: 'Cancelled', message: `Cancelled by ${ending.requestedBy}`, requested_by: ending.requestedBy };
  // Lost output keeps the status the process earned, but is said in the detail (and by a SYSTEM event).
  const lost = ending.outputLost ? { output_lost: ending.outputLost } : {};
  if ('error' in ending) return { reason: ending.reason, error: ending.error, ...lost };
  return {
    reason: 'Completed',
    message: ending.outputLost
      ? [ending.message, ending.outputLost.reason].filter((m) => m !== null).join('; ')
      : ending.message,
    ...(ending.exitCode !== undefined ? { exit_code: ending.exitCode } : {}),
    ...lost,
  };
}

/**
 * The terminal write: status, status_detail, completed_at and the final SYSTEM event (StructureRunCompleted
 * for SUCCEEDED/FAILED, StructureRunError, StructureRunCancelled; after StructureRunOutputLost when output
 * was lost), and the run's own credentials are deleted.
 * Returns the status the run has afterwards (the earlier one if it had already ended).
 */
export async function finishRun(
  ds: DataSource,
  runId: string,
  ending: RunEnding,
  inTransaction: TerminalWriteHooks = {},
): Promise<RunStatus | undefined> {
  // The run's credentials are deleted beside the transaction, on a connection of their own: its commit does not
  // wait for one more round trip. Deleted rather than deactivated: a deactivated key could be reactivated with
  // UpdateApiKey. Both are repeated by a retry of the whole (each is idempotent).
  const [status] = await Promise.all([
    finishTransaction(ds, runId, ending, inTransaction),
    queryPrepared(ds, `DELETE FROM api_keys WHERE run_id = $1`, [runId]),
  ]);
  return status;
}

/** What else a terminal write does in its transaction. */
export interface TerminalWriteHooks {
  /** When the run moved, before the final SYSTEM event (an assistant run's answer event and thread message). */
  alsoWhenMoved?: (em: EntityManager, run: Run) => Promise<void>;
  /** Last, whether the run moved (`moved`: its row) or had ended (the release of its execution slot). */
  last?: (em: EntityManager, moved?: Run) => Promise<void>;
}

function finishTransaction(
  ds: DataSource,
  runId: string,
  ending: RunEnding,
  { alsoWhenMoved, last }: TerminalWriteHooks,
): Promise<RunStatus | undefined> {
  return ds.transaction(async (em) => {
    const { status, moved } = await terminalWrite(em, runId, ending, alsoWhenMoved);
    await last?.(em, moved);
    return status;
  });
}

async function terminalWrite(
  em: EntityManager,
  runId: string,
  ending: RunEnding,
  alsoWhenMoved?: (em: EntityManager, run: Run) => Promise<void>,
): Promise<{ status: RunStatus | undefined; moved?: Run }> {
  const completedAt = new Date();
  const detail = statusDetailOf(ending);
  const output =
    'output' in ending && ending.output !== undefined
      ? { output: ending.output, output_timestamp: completedAt.getTime() / 1000 }
      : {};
  const moved = await transitionRun(em, runId, ending.status, {
    status_detail: detail,
    completed_at: completedAt,
    ...output,
  });
  if (moved) {
    const times = { started_at: iso(moved.started_at), completed_at: iso(completedAt) };
    const event =
      'error' in ending
        ? { type: 'StructureRunError', payload: { status: ending.status, status_detail: { error: ending.error } } }
        : ending.status === 'CANCELLED'
          ? { type: 'StructureRunCancelled', payload: { status: 'CANCELLED', ...times, status_detail: detail } }
          : { type: 'StructureRunCompleted', payload: { status: ending.status, ...times, status_detail: detail } };
    await alsoWhenMoved?.(em, moved);
    const lost =
      ending.status !== 'CANCELLED' && ending.outputLost
        ? [{ type: 'StructureRunOutputLost', origin: 'SYSTEM' as const, payload: { output_lost: ending.outputLost } }]
        : [];
    await appendEvents(em, runId, [...lost, { ...event, origin: 'SYSTEM' }]);
  }
  if (moved) return { status: moved.status, moved };
  const rows: Array<{ status: RunStatus }> = await queryPrepared(em, `SELECT status FROM runs WHERE run_id = $1`, [
    runId,
  ]);
  return { status: rows[0]?.status };
}
