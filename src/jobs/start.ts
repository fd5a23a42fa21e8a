// The one start of a job, by the first activity of its workflow: QUEUED → the kind's second open status
// (STARTING, DEPLOYING, RUNNING). The api starts the workflow before the row's insert commits (insertAndStart
// commits after Temporal accepted the start, or just before it), so on a loaded machine the activity can get
// here first: the row is waited for (ROW_VISIBLE_WAIT_MS), then locked and read before the transition (a
// transition tried first could miss a row committed an instant later, which a following read would see QUEUED).
import type { DataSource, EntityManager } from 'typeorm';
import { queryPrepared } from '../persistence/direct-sql';
import type { NewEvent } from '../persistence/run-feed';
import { waitFor } from './await-end';
import type { JobKind } from './kinds';
import { transition } from './transition';

/** How long a start waits for the job's row to become visible; only a row that stays invisible (its insert rolled back) means there is no job. */
export const ROW_VISIBLE_WAIT_MS = 10_000;

/**
 * Starts job `id`; answers its status afterwards (the started status, or the one it already had), or
 * undefined when the row never became visible. `events`: appended to its feed with the move (runs).
 */
export function startJob(
  ds: DataSource,
  kind: JobKind,
  id: string,
  events: NewEvent[] = [],
): Promise<string | undefined> {
  const once = () =>
    ds.transaction(async (em) => {
      const [row]: Array<{ status: string }> = await queryPrepared(
        em,
        `SELECT status FROM ${kind.table} WHERE ${kind.idColumn} = $1 FOR UPDATE`,
        [id],
      );
      if (row?.status !== kind.open[0]) return row?.status;
      return startJobIn(em, kind, id, events);
    });
  return waitFor(once, (status) => status !== undefined, ROW_VISIBLE_WAIT_MS);
}

/**
 * The start within a transaction of the caller's, which knows the row is visible (admission: a job starts in
 * the transaction that admits it); answers as `startJob`, without waiting for the row. The guarded transition
 * alone decides (one statement); only a row that did not move is read back.
 */
export async function startJobIn(
  em: EntityManager,
  kind: JobKind,
  id: string,
  events: NewEvent[] = [],
): Promise<string | undefined> {
  if (await transition(em, kind, id, kind.open[1], {}, undefined, events)) return kind.open[1];
  const [row]: Array<{ status: string }> = await queryPrepared(
    em,
    `SELECT status FROM ${kind.table} WHERE ${kind.idColumn} = $1`,
    [id],
  );
  return row?.status;
}

/** A started job that has not ended (what a start activity answers its workflow). */
export const goesOn = (kind: JobKind, status: string | undefined) =>
  status !== undefined && !kind.terminal.includes(status);
