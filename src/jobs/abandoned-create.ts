// A keyed create whose record committed but whose workflow never started: the api that made it died between
// insertAndStart's commit and its start (or its undo), so the key still names a QUEUED record that nothing will
// ever run. A repeat of the request (its client retrying the lost answer) must not be answered that record: it
// takes the key over instead, deleting the record, and creates anew (the cluster drill's api kill found this).
// Only a key older than any start can take is judged, and only by Temporal's word that the workflow is absent.
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { DataSource } from 'typeorm';
import { workflowIdOf, type ResourceKind } from '../temporal/workflow-start';
import type { IdempotencyClaim } from '../persistence/pending-claim';
import { JOB_KINDS, RUN_JOB, type JobKind } from './kinds';

/** Past the start's deadline (create.ts, 5 s) and its undo, with room for a slow commit. */
export const ABANDONED_AFTER_SECONDS = 30;

const jobKindOf = (kind: ResourceKind): JobKind | undefined =>
  kind.endsWith('-run') ? RUN_JOB : JOB_KINDS.find((k) => k !== RUN_JOB && k.resourceKind({}) === kind);

/**
 * When the key's record was abandoned (still in its first status, its key older than ABANDONED_AFTER_SECONDS,
 * its workflow absent), deletes the key and the record and answers true: the caller creates anew.
 */
export async function takeOverAbandoned(
  ds: DataSource,
  temporal: Client,
  claim: IdempotencyClaim,
  record: { kind: ResourceKind; id: string },
): Promise<boolean> {
  const kind = jobKindOf(record.kind);
  if (!kind) return false;
  const [row] = (await ds.query(
    `SELECT j.status FROM idempotency_keys k JOIN ${kind.table} j ON j.${kind.idColumn} = k.record_id
      WHERE k.organization_id = $1 AND k.operation = $2 AND k.target = $3 AND k.key = $4
        AND k.created_at < now() - make_interval(secs => $5)`,
    [claim.organizationId, claim.operation, claim.target, claim.key, ABANDONED_AFTER_SECONDS],
  )) as Array<{ status: string }>;
  if (row?.status !== kind.open[0]) return false;
  try {
    await temporal.workflow.getHandle(workflowIdOf(record.kind, record.id)).describe();
    return false; // started: the record is answered as it is
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
  }
  await ds.transaction(async (em) => {
    await em.query(
      `DELETE FROM idempotency_keys WHERE organization_id = $1 AND operation = $2 AND target = $3 AND key = $4`,
      [claim.organizationId, claim.operation, claim.target, claim.key],
    );
    // Guarded: a record its workflow has begun to move is not deleted (a workflow finding no row ends at once).
    await em.query(`DELETE FROM ${kind.table} WHERE ${kind.idColumn} = $1 AND status = $2`, [record.id, kind.open[0]]);
  });
  return true;
}
