// The reconciliation of lost jobs, for every kind of the registry alike: a job still open while Temporal says
// its workflow closed (terminated, timed out, failed, cancelled) or never existed would otherwise say
// "RUNNING" forever. Each such row becomes what its kind says a lost job becomes (JobKind.lost), through
// the guarded transition. Only rows untouched for `olderThanSeconds` are examined, so a job whose workflow
// is being started right now is left alone.
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { DataSource } from 'typeorm';
import { workflowIdOf } from '../temporal/workflow-start';
import { JOB_KINDS, type JobKind, type Row, type WorkflowState } from './kinds';
import { transition } from './transition';

export interface ReconcileInput {
  olderThanSeconds: number;
  limit: number;
}

/** What the workflow of an open record looks like from Temporal: still running, or closed (and how). */
export async function workflowState(temporal: Client, workflowId: string): Promise<WorkflowState> {
  try {
    return (await temporal.workflow.getHandle(workflowId).describe()).status.name;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return 'NOT_FOUND';
    throw err;
  }
}

const reasonFor = (state: WorkflowState) =>
  state === 'NOT_FOUND'
    ? 'Its workflow does not exist (it was never started or was deleted)'
    : `Its workflow ended (${state}) without recording a final state`;

/** Settles the lost jobs of one kind; answers how many moved. */
async function settleLost(deps: { ds: DataSource; temporal: Client }, kind: JobKind, input: ReconcileInput) {
  const columns = [`${kind.idColumn} AS id`, ...kind.rowColumns].join(', ');
  const rows: Row[] = await deps.ds.query(
    `SELECT ${columns} FROM ${kind.table} WHERE status = ANY($3::text[])
       AND updated_at < now() - make_interval(secs => $1) ORDER BY updated_at LIMIT $2`,
    [input.olderThanSeconds, input.limit, kind.open],
  );
  let settled = 0;
  for (const row of rows) {
    const id = row.id as string;
    const state = await workflowState(deps.temporal, workflowIdOf(kind.resourceKind(row), id));
    if (state === 'RUNNING') continue;
    const lost = kind.lost(row, state, reasonFor(state));
    // One statement: the move and, for a run, its last event.
    if (await transition(deps.ds, kind, id, lost.to, lost.changes, undefined, lost.events)) settled++;
  }
  return settled;
}

/** Settles the lost jobs of every kind; answers how many moved, by kind. */
export async function settleLostJobs(
  deps: { ds: DataSource; temporal: Client },
  input: ReconcileInput,
): Promise<Record<JobKind['name'], number>> {
  const settled = {} as Record<JobKind['name'], number>;
  for (const kind of JOB_KINDS) settled[kind.name] = await settleLost(deps, kind, input);
  return settled;
}
