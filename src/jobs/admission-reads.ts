// The reads of admission's queue (src/jobs/admission.ts), under the organization's advisory lock: who holds
// slots, the waiters a grant considers, their resources' limits. As few statements and rows as a grant needs.
import type { EntityManager } from 'typeorm';
import type { Concurrency } from '../persistence/entities/code-resource';
import { queryPrepared } from '../persistence/direct-sql';
import type { ResourceLimits, Waiter } from './admission-queue';

/** How many waiters one grant considers: the oldest, so that a flood of queued runs costs a bounded pass. */
export const QUEUE_WINDOW = 2000;
/** Waiters read first beyond the free slots: when none of them is held back by its resource, they suffice. */
const QUEUE_PAGE = 16;

const WAITER_COLUMNS = 'job_kind, job_id, workflow_id, resource_id, concurrency_key, in_parent_slot, queued_at';
type WaiterRow = { job_kind: string; job_id: string; workflow_id: string } & SlotRow;
type SlotRow = { resource_id: string | null; concurrency_key: string | null; in_parent_slot: boolean };

/**
 * A row of execution_slots that stands for a job: one its job asked for, or a place taken for a run of a key
 * (admission.ts, `placeOlderRunsOfKey`) whose run is still QUEUED (one cancelled before it asked is passed over;
 * its terminal write, or the reconciler, frees its row).
 */
export const LIVE_PLACE = `(execution_slots.asked OR EXISTS (SELECT 1 FROM runs j
   WHERE j.run_id = execution_slots.job_id AND j.status = 'QUEUED'))`;

/**
 * The organization's waiters (`$1`), oldest first: the first `first` of them (an SQL expression), and every one
 * of the window (`$windowParam`) that runs in its parent's slot (the organization's share does not hold those back).
 */
const waitersSql = (first: string, windowParam: string) =>
  `SELECT job_kind, job_id, workflow_id, resource_id, concurrency_key, in_parent_slot, queued_at FROM (
     (SELECT ${WAITER_COLUMNS} FROM execution_slots
       WHERE organization_id = $1 AND state = 'WAITING' AND ${LIVE_PLACE} ORDER BY queued_at, job_id LIMIT ${first})
     UNION
     (SELECT ${WAITER_COLUMNS} FROM execution_slots
       WHERE organization_id = $1 AND state = 'WAITING' AND in_parent_slot AND ${LIVE_PLACE}
       ORDER BY queued_at, job_id LIMIT ${windowParam})
   ) w`;

const waiterOf = (r: WaiterRow): Waiter => ({
  kind: r.job_kind,
  jobId: r.job_id,
  workflowId: r.workflow_id,
  resourceId: r.resource_id,
  key: r.concurrency_key,
  inParentSlot: r.in_parent_slot,
});

export async function loadWaiters(em: EntityManager, organizationId: string, first: number): Promise<Waiter[]> {
  const rows: WaiterRow[] = await queryPrepared(em, `${waitersSql('$2', '$3')} ORDER BY queued_at, job_id`, [
    organizationId,
    first,
    QUEUE_WINDOW,
  ]);
  return rows.map(waiterOf);
}

/**
 * In one statement, the organization's holders (counted by resource, key and parent slot) and the waiters its
 * free slots may go to first: the oldest `free + QUEUE_PAGE` when a slot is free (else none), and those in their
 * parent's slot. `first`: how many of the oldest were asked for.
 */
export async function loadHoldersAndPage(
  em: EntityManager,
  organizationId: string,
  limit: number,
): Promise<{ held: Array<SlotRow & { n: number }>; waiters: Waiter[]; first: number }> {
  const [row]: Array<{ held: Array<SlotRow & { n: number }>; waiters: WaiterRow[]; first: number }> =
    await queryPrepared(
      em,
      `WITH held AS (
       SELECT resource_id, concurrency_key, in_parent_slot, count(*)::int AS n FROM execution_slots
        WHERE organization_id = $1 AND state = 'HOLDING' GROUP BY 1, 2, 3),
     page AS (
       SELECT CASE WHEN free > 0 THEN free + $3 ELSE 0 END AS first
         FROM (SELECT $2::int - coalesce(sum(n) FILTER (WHERE NOT in_parent_slot), 0)::int AS free FROM held) f)
     SELECT (SELECT coalesce(json_agg(held), '[]') FROM held) AS held, (SELECT first FROM page) AS first,
            (SELECT coalesce(json_agg(w ORDER BY queued_at, job_id), '[]')
               FROM (${waitersSql('(SELECT first FROM page)', '$4')}) w) AS waiters`,
      [organizationId, limit, QUEUE_PAGE, QUEUE_WINDOW],
    );
  return { held: row.held, waiters: row.waiters.map(waiterOf), first: row.first };
}

export async function loadLimits(em: EntityManager, resourceIds: string[]): Promise<Map<string, ResourceLimits>> {
  const limits = new Map<string, ResourceLimits>();
  if (!resourceIds.length) return limits;
  const resources: Array<{ resource_id: string; concurrency: Concurrency | null; paused: boolean }> =
    await queryPrepared(
      em,
      `SELECT resource_id, concurrency, queue_paused_at IS NOT NULL AS paused FROM code_resources
      WHERE resource_id = ANY($1)
     UNION ALL
     SELECT assistant_id, concurrency, queue_paused_at IS NOT NULL FROM assistants WHERE assistant_id = ANY($1)`,
      [resourceIds],
    );
  for (const r of resources)
    limits.set(r.resource_id, { perKey: r.concurrency?.limit, total: r.concurrency?.total_limit, paused: r.paused });
  return limits;
}
