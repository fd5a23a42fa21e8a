// A keyed create whose record committed but whose workflow never started: the api that made it died between
// insertAndStart's commit and its start (or its undo), so the key still names a QUEUED record that nothing will
// ever run. A repeat of the request (its client retrying the lost answer, at once) must not be answered that
// record: it waits until the key is older than any start and its undo can take, and if Temporal still says the
// workflow is absent, takes the key over, deleting the record, and creates anew (found by the cluster drill's
// api kill).
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { DataSource } from 'typeorm';
import { workflowIdOf, type ResourceKind } from '../temporal/workflow-start';
import type { IdempotencyClaim } from '../persistence/pending-claim';
import { JOB_KINDS, RUN_JOB, type JobKind } from './kinds';

/** Past the start's deadline (create.ts, 5 s) and its undo, with room for a slow commit. */
export const ABANDONED_AFTER_SECONDS = 15;

const jobKindOf = (kind: ResourceKind): JobKind | undefined =>
  kind.endsWith('-run') ? RUN_JOB : JOB_KINDS.find((k) => k !== RUN_JOB && k.resourceKind({}) === kind);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Whether a repeat is answered the record its key holds ('replay'), or the key is free again ('again': its
 * creator undid a failed start, or the record was abandoned, and the key and the record are deleted here).
 * A record still in its first status whose workflow is absent may have a creator still starting it: the
 * repeat waits (up to ABANDONED_AFTER_SECONDS from the key's claim) for the workflow, or the undo, to appear.
 */
export async function judgeHeldRecord(
  ds: DataSource,
  temporal: Client,
  claim: IdempotencyClaim,
  record: { kind: ResourceKind; id: string },
): Promise<'replay' | 'again'> {
  const kind = jobKindOf(record.kind);
  if (!kind) return 'replay';
  const scope = [claim.organizationId, claim.operation, claim.target, claim.key];
  for (;;) {
    const [row] = (await ds.query(
      `SELECT j.status, extract(epoch FROM now() - k.created_at)::float8 AS age
         FROM idempotency_keys k LEFT JOIN ${kind.table} j ON j.${kind.idColumn} = k.record_id
        WHERE k.organization_id = $1 AND k.operation = $2 AND k.target = $3 AND k.key = $4`,
      scope,
    )) as Array<{ status: string | null; age: number }>;
    if (!row) return 'again'; // its creator's start failed and was undone
    if (row.status !== kind.open[0]) return 'replay'; // moved by its workflow (or gone: answered as before)
    try {
      await temporal.workflow.getHandle(workflowIdOf(record.kind, record.id)).describe();
      return 'replay';
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
    }
    if (row.age < ABANDONED_AFTER_SECONDS) {
      await sleep(Math.min(1_000, (ABANDONED_AFTER_SECONDS - row.age) * 1000));
      continue;
    }
    await ds.transaction(async (em) => {
      await em.query(
        `DELETE FROM idempotency_keys WHERE organization_id = $1 AND operation = $2 AND target = $3 AND key = $4`,
        scope,
      );
      // Guarded: a record its workflow has begun to move is not deleted (a workflow finding no row ends at once).
      await em.query(`DELETE FROM ${kind.table} WHERE ${kind.idColumn} = $1 AND status = $2`, [
        record.id,
        kind.open[0],
      ]);
    });
    return 'again';
  }
}
