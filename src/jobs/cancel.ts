// The one cancel of a job, and the one stop of the open jobs of something about to be deleted. The api never
// writes a job's status: it sends the workflow's `cancel` signal (with who asked) and waits, bounded, for
// the workflow to record the end.
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { DataSource } from 'typeorm';
import { conflict } from '../errors';
import type { WakeUps } from '../persistence/run-updates-hub';
import { cancelRunSignal } from '../temporal/contracts';
import { workflowIdOf } from '../temporal/workflow-start';
import { waitFor } from './await-end';
import { endedCancelled, type JobKind, type Row } from './kinds';

/** How long a cancel waits for the workflow to record the end before answering with the current record. */
const CANCEL_WAIT_MS = 10_000;
/** How long a stop waits for the open jobs it cancelled to record their ends (then the caller goes on). */
const STOP_WAIT_MS = 5_000;

const rowOf = (job: object) => job as Row;

/** Sends `cancel` to the job's workflow; one that is gone already is not an error (the reconciler settles it). */
export async function signalCancel(temporal: Client, kind: JobKind, job: object, requestedBy: string): Promise<void> {
  const workflowId = workflowIdOf(kind.resourceKind(rowOf(job)), rowOf(job)[kind.idColumn] as string);
  try {
    await temporal.workflow.getHandle(workflowId).signal(cancelRunSignal, { requestedBy });
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
  }
}

/**
 * Cancels `job` and answers once its workflow recorded the end (bounded wait; then the current record, by
 * `read`). Already cancelled (CANCELLED, or as the kind says): answered as is. Ended otherwise (before or
 * during the wait): 409.
 */
export async function cancelAndWait<J extends { status: string }>(
  temporal: Client,
  kind: JobKind,
  job: J,
  opts: { requestedBy: string; read: () => Promise<J>; wakeUps?: WakeUps },
): Promise<J> {
  const refuseIfEnded = (j: J) => {
    if (kind.terminal.includes(j.status) && !endedCancelled(kind, rowOf(j)))
      throw conflict(`This ${kind.noun} already ended: ${j.status}`);
  };
  if (endedCancelled(kind, rowOf(job))) return job;
  refuseIfEnded(job);
  await signalCancel(temporal, kind, job, opts.requestedBy);
  const settled = await waitFor(opts.read, (j) => kind.terminal.includes(j.status), CANCEL_WAIT_MS, opts.wakeUps);
  refuseIfEnded(settled);
  return settled;
}

/** Cancels the `open` jobs (as asked by `requestedBy`) and waits (bounded) until none of them is open. */
export async function stopOpen(
  deps: { ds: DataSource; temporal: Client },
  kind: JobKind,
  open: object[],
  requestedBy: string,
): Promise<void> {
  if (!open.length) return;
  await Promise.all(open.map((job) => signalCancel(deps.temporal, kind, job, requestedBy)));
  const ids = open.map((job) => rowOf(job)[kind.idColumn]);
  await waitFor(
    async () =>
      Number(
        (
          await deps.ds.query(
            `SELECT count(*) AS n FROM ${kind.table} WHERE ${kind.idColumn} = ANY($1) AND status = ANY($2)`,
            [ids, kind.open],
          )
        )[0].n,
      ),
    (n) => n === 0,
    STOP_WAIT_MS,
  );
}
