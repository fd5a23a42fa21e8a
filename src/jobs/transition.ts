// The one guarded transition of every status record: `UPDATE <table> SET status = <to>, ... WHERE <id> AND
// status IN (<the statuses <to> may be reached from>) RETURNING *`. It only moves forward and never leaves a
// terminal state, so a retried activity is harmless. A kind that notifies sends its NOTIFY in the same
// statement when the row moved (one round trip, not three: bench/RESULTS.md); a job kind's move is counted in
// the jobs metric. Only src/jobs (and migrations) write a status column (test/unit/house-status-writers).
import type { DataSource, EntityManager } from 'typeorm';
import { queryPrepared } from '../persistence/direct-sql';
import { feedAppend, notifyOf, type NewEvent } from '../persistence/run-feed';
import { isJobKind, type Row, type StatusKind } from './kinds';
import { recordMove } from './metric';

/**
 * Moves row `id` of `kind` to `to` when that is forward from its status; answers the moved row, or
 * undefined. `changes`: further columns to set (undefined ones are left as they are). `guard`: a further SQL
 * condition the row must meet to move (an invite that has not expired). `events`: appended to the row's feed
 * when it moved, in the same statement (a kind with an event feed: runs).
 */
export async function transition(
  db: DataSource | EntityManager,
  kind: StatusKind,
  id: string,
  to: string,
  changes: Row = {},
  guard?: string,
  events: NewEvent[] = [],
): Promise<Row | undefined> {
  const from = kind.from[to];
  if (!from) throw new Error(`${kind.table} has no status ${to}`);
  const sets = ['status = $2', 'updated_at = now()'];
  const values: unknown[] = [id, to, from];
  for (const [column, value] of Object.entries(changes)) {
    if (value === undefined) continue;
    values.push(kind.jsonColumns?.includes(column) ? JSON.stringify(value) : value);
    sets.push(`${column} = $${values.length}`);
  }
  if (kind.onEnd && kind.terminal.includes(to)) {
    if (kind.onEnd.stampCompletedAt && changes.completed_at === undefined) sets.push('completed_at = now()');
    for (const column of kind.onEnd.clear ?? []) sets.push(`${column} = NULL`);
  }
  if (events.length && !(kind.eventFeed && kind.notifyChannel)) throw new Error(`${kind.table} has no event feed`);
  const feed = events.length ? feedAppend(events, values.length + 1) : undefined;
  if (feed) {
    values.push(...feed.values);
    sets.push(feed.set);
  }
  const where = `${kind.idColumn} = $1 AND status = ANY($3::text[])${guard ? ` AND (${guard})` : ''}`;
  const update = `UPDATE ${kind.table} SET ${sets.join(', ')} WHERE ${where} RETURNING *`;
  let row: Row | undefined;
  if (kind.notifyChannel) {
    values.push(kind.notifyChannel);
    // A status change names the organization: its stream of run changes wakes (src/api/sse/run-changes.ts).
    const notify = notifyOf(`moved.${kind.idColumn}`, `$${values.length}`, 'moved.organization_id');
    const inserted = feed ? `, inserted AS (${feed.insert})` : '';
    const rows: Row[] = await queryPrepared(
      db,
      `WITH moved AS (${update})${inserted} SELECT moved.*, ${notify} FROM moved`,
      values,
    );
    row = rows[0];
  } else {
    // TypeORM answers an UPDATE as [rows, count].
    const [rows]: [Row[], number] = await queryPrepared(db, update, values);
    row = rows[0];
  }
  if (row && isJobKind(kind)) recordMove(kind, row, to, changes.started_at !== undefined);
  return row;
}
