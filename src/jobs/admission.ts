// Admission: the per-organization fair share of execution. At most `limit` jobs of one organization (its code
// runs and builds together) execute at once; the others wait, in order, in PostgreSQL (the execution_slots
// table), holding no worker slot: their workflows wait for a `slotGranted` signal (or re-try on a timer).
// Keyed by organization and job kind, so that every kind of durable job can be admitted the same way.
//
// Each change is one transaction under the organization's advisory lock: count the holders, grant free slots
// to the oldest waiters, answer who was granted (the caller signals their workflows after the commit). A
// grant is a row state, not a message: a lost signal delays a job until its timer re-tries, never strands it.
import type { DataSource, EntityManager } from 'typeorm';
import { DEPLOYMENT_JOB, RUN_JOB } from './kinds';

/** The kinds of job that take an execution slot (their rows: the registry's). */
export const ADMITTED_KINDS = { run: RUN_JOB, deployment: DEPLOYMENT_JOB } as const;

export type AdmittedKind = keyof typeof ADMITTED_KINDS;

export interface SlotJob {
  kind: AdmittedKind;
  jobId: string;
}

/** A waiter that was given a slot: its workflow is to be signalled `slotGranted`. */
export interface SlotGrant extends SlotJob {
  workflowId: string;
}

export type Admission =
  /** The job holds a slot: it may execute. */
  | { outcome: 'admitted'; granted: SlotGrant[] }
  /** The job waits: `executing` of its organization's `limit` slots are held, `ahead` jobs wait before it. */
  | { outcome: 'waiting'; executing: number; ahead: number; limit: number; granted: SlotGrant[] }
  /** The job already ended: its slot (if any) was released. */
  | { outcome: 'ended'; granted: SlotGrant[] }
  /** The job's row does not exist (yet: its insert may not have committed). */
  | { outcome: 'missing' };

/** The reason in the status detail of a job that waits for a slot. */
export const WAITING_REASON = 'WaitingForExecutionSlot';

/** First key of the advisory locks of admission (the second is the organization's hash). */
const ADMISSION_LOCK = 0x5107;

const lockOrganization = (em: EntityManager, organizationId: string) =>
  em.query(`SELECT pg_advisory_xact_lock($1, hashtext($2))`, [ADMISSION_LOCK, organizationId]);

/**
 * Takes a slot for the job, or queues it (FIFO per organization, by the job's creation time) and answers its
 * place. Repeatable: a job that holds a slot is admitted again, a waiting one keeps its place. Free slots
 * go to the oldest waiters first, so a newcomer never overtakes the queue; others granted meanwhile are in
 * `granted`. The waiting job's status detail says why it waits; an admitted one's is cleared.
 */
export async function acquireSlot(
  ds: DataSource,
  job: SlotJob,
  opts: { workflowId: string; limit: number },
): Promise<Admission> {
  const kind = ADMITTED_KINDS[job.kind];
  return ds.transaction(async (em) => {
    const [row]: Array<{ organization_id: string; status: string; created_at: Date }> = await em.query(
      `SELECT organization_id, status, created_at FROM ${kind.table} WHERE ${kind.idColumn} = $1`,
      [job.jobId],
    );
    if (!row) return { outcome: 'missing' };
    await lockOrganization(em, row.organization_id);
    if (!kind.open.includes(row.status)) {
      return { outcome: 'ended', granted: await releaseUnderLock(em, job, row.organization_id, opts.limit) };
    }
    await em.query(
      `INSERT INTO execution_slots (job_kind, job_id, organization_id, workflow_id, state, queued_at)
       VALUES ($1, $2, $3, $4, 'WAITING', $5) ON CONFLICT (job_kind, job_id) DO NOTHING`,
      [job.kind, job.jobId, row.organization_id, opts.workflowId, row.created_at],
    );
    const granted = await grantFreeSlots(em, row.organization_id, opts.limit);
    const [own]: Array<{ state: string; executing: number; ahead: number }> = await em.query(
      `SELECT s.state,
              (SELECT count(*)::int FROM execution_slots h
                WHERE h.organization_id = s.organization_id AND h.state = 'HOLDING') AS executing,
              (SELECT count(*)::int FROM execution_slots w
                WHERE w.organization_id = s.organization_id AND w.state = 'WAITING'
                  AND (w.queued_at, w.job_id) < (s.queued_at, s.job_id)) AS ahead
         FROM execution_slots s WHERE s.job_kind = $1 AND s.job_id = $2`,
      [job.kind, job.jobId],
    );
    const others = granted.filter((g) => !(g.kind === job.kind && g.jobId === job.jobId));
    if (own.state === 'HOLDING') {
      await em.query(
        `UPDATE ${kind.table} SET status_detail = NULL
          WHERE ${kind.idColumn} = $1 AND status = 'QUEUED' AND status_detail->>'reason' = $2`,
        [job.jobId, WAITING_REASON],
      );
      return { outcome: 'admitted', granted: others };
    }
    const waiting = { executing: own.executing, ahead: own.ahead, limit: opts.limit };
    await em.query(
      `UPDATE ${kind.table} SET status_detail = $2, updated_at = now() WHERE ${kind.idColumn} = $1 AND status = 'QUEUED'`,
      [job.jobId, JSON.stringify(waitingDetail(waiting))],
    );
    return { outcome: 'waiting', ...waiting, granted: others };
  });
}

/**
 * Gives up the job's slot (or its place in the queue) and grants the freed slots to the oldest waiters of its
 * organization, whom the caller signals. Repeatable: a job without a row releases nothing.
 */
export async function releaseSlot(ds: DataSource, job: SlotJob, opts: { limit: number }): Promise<SlotGrant[]> {
  return ds.transaction(async (em) => {
    const [row]: Array<{ organization_id: string }> = await em.query(
      `SELECT organization_id FROM execution_slots WHERE job_kind = $1 AND job_id = $2`,
      [job.kind, job.jobId],
    );
    if (!row) return [];
    await lockOrganization(em, row.organization_id);
    return releaseUnderLock(em, job, row.organization_id, opts.limit);
  });
}

async function releaseUnderLock(
  em: EntityManager,
  job: SlotJob,
  organizationId: string,
  limit: number,
): Promise<SlotGrant[]> {
  await em.query(`DELETE FROM execution_slots WHERE job_kind = $1 AND job_id = $2`, [job.kind, job.jobId]);
  return grantFreeSlots(em, organizationId, limit);
}

/** The slot rows (held or waited for) untouched for `olderThanSeconds`: the reconciler checks their workflows. */
export async function staleSlotHolders(
  ds: DataSource,
  opts: { olderThanSeconds: number; limit: number },
): Promise<SlotGrant[]> {
  const rows: Array<{ job_kind: AdmittedKind; job_id: string; workflow_id: string }> = await ds.query(
    `SELECT job_kind, job_id, workflow_id FROM execution_slots
      WHERE coalesce(granted_at, queued_at) < now() - make_interval(secs => $1)
      ORDER BY coalesce(granted_at, queued_at) LIMIT $2`,
    [opts.olderThanSeconds, opts.limit],
  );
  return rows.map((r) => ({ kind: r.job_kind, jobId: r.job_id, workflowId: r.workflow_id }));
}

/** The organization's free slots (under its lock) go to its oldest waiters; answers them. */
async function grantFreeSlots(em: EntityManager, organizationId: string, limit: number): Promise<SlotGrant[]> {
  // TypeORM answers an UPDATE as [rows, count].
  const [rows]: [Array<{ job_kind: AdmittedKind; job_id: string; workflow_id: string }>, number] = await em.query(
    `UPDATE execution_slots SET state = 'HOLDING', granted_at = clock_timestamp()
      WHERE (job_kind, job_id) IN (
        SELECT job_kind, job_id FROM execution_slots
         WHERE organization_id = $1 AND state = 'WAITING'
         ORDER BY queued_at, job_id
         LIMIT greatest(0, $2 - (SELECT count(*) FROM execution_slots
                                  WHERE organization_id = $1 AND state = 'HOLDING')))
      RETURNING job_kind, job_id, workflow_id`,
    [organizationId, limit],
  );
  return rows.map((r) => ({ kind: r.job_kind, jobId: r.job_id, workflowId: r.workflow_id }));
}

/** The status detail of a waiting job: what it waits for, the setting that decides it, how many execute. */
export function waitingDetail(w: { executing: number; ahead: number; limit: number }): Record<string, unknown> {
  return {
    reason: WAITING_REASON,
    message:
      `Waiting for an execution slot of its organization: ${w.executing} of its runs and builds are executing ` +
      `(ORG_MAX_CONCURRENT_RUNS=${w.limit}); ${w.ahead} more wait before this one`,
    executing: w.executing,
    limit: w.limit,
    ahead: w.ahead,
  };
}
