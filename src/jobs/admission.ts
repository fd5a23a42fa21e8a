// Admission: the per-organization fair share of execution. At most `limit` jobs of one organization (its runs
// of every kind, chat messages included, builds, knowledge base jobs and data jobs together) execute at once; the others wait, in order,
// in PostgreSQL (the execution_slots
// table), holding no worker slot: their workflows wait for a `slotGranted` signal (or re-try on a timer).
// Keyed by organization and job kind, so that every kind of durable job can be admitted the same way.
//
// Each change is one transaction under the organization's advisory lock: count the holders, grant free slots
// to the oldest waiters, answer who was granted (the caller signals their workflows after the commit). A
// grant is a row state, not a message: a lost signal delays a job until its timer re-tries, never strands it.
//
// Runs of a structure, function, tool or assistant also count per resource and per concurrency key when the
// resource declares `concurrency` (docs/run-control.md#concurrency-keys-and-limits): the same slots, the same
// queue, one more condition on a grant (admission-queue.ts); the strategies `skip` and `cancel_in_progress` act
// when a run first asks. An assistant is a resource here like the others (the slot's resource_id is its id);
// the structure and tool runs an assistant run calls execute in its slot (`inParentSlot`).
import type { DataSource, EntityManager } from 'typeorm';
import type { Concurrency } from '../persistence/entities/code-resource';
import { queryPrepared } from '../persistence/direct-sql';
import { chooseGrants, Holdings, type ResourceLimits, type Waiter } from './admission-queue';
import { describeWaiting, WAITING_REASON, waitingDetail, type Waiting } from './admission-waiting';
import { LIVE_PLACE, loadHoldersAndPage, loadLimits, loadWaiters, QUEUE_WINDOW } from './admission-reads';
import { DATA_JOB, DEPLOYMENT_JOB, KNOWLEDGE_BASE_JOB, RUN_JOB } from './kinds';

/**
 * The kinds of job that take an execution slot (their rows: the registry's): everything that takes the machine.
 * Integration deliveries do not: each one only starts a run, which takes its own.
 */
export const ADMITTED_KINDS = {
  run: RUN_JOB,
  deployment: DEPLOYMENT_JOB,
  knowledge_base_job: KNOWLEDGE_BASE_JOB,
  data_job: DATA_JOB,
} as const;

export type AdmittedKind = keyof typeof ADMITTED_KINDS;

export interface SlotJob {
  kind: AdmittedKind;
  jobId: string;
  /** A run an assistant run calls: not counted against the organization's share (its parent is). */
  inParentSlot?: boolean;
}

/** A waiter that was given a slot: its workflow is to be signalled `slotGranted`. */
export interface SlotGrant extends SlotJob {
  workflowId: string;
}

/**
 * Runs that a newer run of their key supersedes (strategy `cancel_in_progress`): the caller cancels them through
 * the job kernel (src/jobs/cancel.ts signalCancel), so each one carries the columns RUN_JOB names its workflow by.
 */
export interface Superseded {
  runs: Array<{ jobId: string; run_id: string; kind: string }>;
  requestedBy: string;
}

export type Admission =
  /** The job holds a slot: it may execute. `status`: the job's status after the caller's `start`, when given one. */
  | { outcome: 'admitted'; granted: SlotGrant[]; superseded?: Superseded; status?: string }
  /** The job waits (`waitingFor` says for what). */
  | ({ outcome: 'waiting'; granted: SlotGrant[]; superseded?: Superseded } & Waiting)
  /** The job already ended: its slot (if any) was released. */
  | { outcome: 'ended'; granted: SlotGrant[] }
  /** A run of a key at its limit under strategy `skip`: it is not to execute (`message` says why). */
  | { outcome: 'skipped'; message: string; granted: SlotGrant[] }
  /** The job's row does not exist (yet: its insert may not have committed). */
  | { outcome: 'missing' };

/** First key of the advisory locks of admission (the second is the organization's hash). */
const ADMISSION_LOCK = 0x5107;

const lockOrganization = (em: EntityManager, organizationId: string) =>
  queryPrepared(em, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, [ADMISSION_LOCK, organizationId]);

/** The job's row, and for a run of a resource its concurrency and its key as the queue counts it. */
interface JobRow {
  organization_id: string;
  status: string;
  created_at: Date;
  resource_id: string | null;
  concurrency: Concurrency | null;
  /** The run's key, else the resource's default key, else "" (null: the resource declares no concurrency). */
  key: string | null;
  resource_kind: string | null;
}

async function readJob(em: EntityManager, job: SlotJob): Promise<JobRow | undefined> {
  const kind = ADMITTED_KINDS[job.kind];
  if (job.kind !== 'run') {
    const [row] = await queryPrepared(
      em,
      `SELECT organization_id, status, created_at, NULL AS resource_id, NULL AS concurrency, NULL AS key,
              NULL AS resource_kind
         FROM ${kind.table} WHERE ${kind.idColumn} = $1`,
      [job.jobId],
    );
    return row;
  }
  // The resource of a run: its structure, function or tool, or the assistant of an assistant run.
  const [row] = await queryPrepared(
    em,
    `SELECT j.organization_id, j.status, j.created_at, coalesce(r.resource_id, a.assistant_id) AS resource_id,
            coalesce(r.concurrency, a.concurrency) AS concurrency,
            coalesce(r.kind, CASE WHEN a.assistant_id IS NOT NULL THEN 'assistant' END) AS resource_kind,
            CASE WHEN coalesce(r.concurrency, a.concurrency) IS NULL THEN NULL
                 ELSE coalesce(j.concurrency_key, coalesce(r.concurrency, a.concurrency)->>'key', '') END AS key
       FROM runs j LEFT JOIN code_resources r ON r.resource_id = j.resource_id
            LEFT JOIN assistants a ON a.assistant_id = j.assistant_id AND j.kind = 'assistant'
      WHERE j.run_id = $1`,
    [job.jobId],
  );
  return row;
}

/**
 * Takes a slot for the job, or queues it (in order of the job's creation) and answers why it waits. Repeatable:
 * a job that holds a slot is admitted again, a waiting one keeps its place. Free slots go to the oldest
 * eligible waiters first, so a newcomer never overtakes the queue; others granted meanwhile are in
 * `granted`. The waiting job's status detail says why it waits; an admitted one's is cleared. A run that
 * asks for the first time, of a key at its limit, is skipped or supersedes the oldest runs of its key, as the
 * resource's strategy says.
 */
export async function acquireSlot(
  ds: DataSource,
  job: SlotJob,
  opts: {
    workflowId: string;
    limit: number;
    /**
     * The job's start (QUEUED → its started status), run in this transaction once the job holds its slot: one
     * transaction and round trip of its workflow fewer than a start after the admission. Answers the status.
     */
    start?: (em: EntityManager) => Promise<string | undefined>;
  },
): Promise<Admission> {
  const kind = ADMITTED_KINDS[job.kind];
  return ds.transaction(async (em) => {
    const row = await readJob(em, job);
    if (!row) return { outcome: 'missing' };
    await lockOrganization(em, row.organization_id);
    if (!kind.open.includes(row.status)) {
      return { outcome: 'ended', granted: await releaseUnderLock(em, job, row.organization_id, opts.limit) };
    }
    // Its first ask inserts its row, or takes over the place an older-keyed newcomer took for it.
    const firstAsk: unknown[] = await queryPrepared(
      em,
      `INSERT INTO execution_slots
              (job_kind, job_id, organization_id, workflow_id, state, queued_at, resource_id, concurrency_key,
               in_parent_slot)
       VALUES ($1, $2, $3, $4, 'WAITING', $5, $6, $7, $8)
       ON CONFLICT (job_kind, job_id) DO UPDATE
          SET asked = true, workflow_id = EXCLUDED.workflow_id, in_parent_slot = EXCLUDED.in_parent_slot
        WHERE NOT execution_slots.asked
       RETURNING job_id`,
      [
        job.kind,
        job.jobId,
        row.organization_id,
        opts.workflowId,
        row.created_at,
        row.resource_id,
        row.key,
        job.inParentSlot ?? false,
      ],
    );
    let superseded: Superseded | undefined;
    if (firstAsk.length && job.kind === 'run' && row.key !== null) {
      const keyed = row as JobRow & { concurrency: Concurrency; key: string };
      await placeOlderRunsOfKey(em, job, keyed);
      if (keyed.concurrency.strategy !== 'queue') {
        const strategy = await applyStrategy(em, job, keyed);
        if (strategy.skipped) {
          await skip(em, job, strategy.skipped);
          return { outcome: 'skipped', message: strategy.skipped, granted: [] };
        }
        superseded = strategy.superseded;
      }
    }
    const { granted, queue } = await grantFreeSlots(em, row.organization_id, opts.limit, row.resource_id);
    const isOwn = (g: SlotGrant) => g.kind === job.kind && g.jobId === job.jobId;
    const others = granted.filter((g) => !isOwn(g));
    // Admitted at its first ask (the common case): it never waited, so there is no waiting detail to clear and
    // no place to read back (two statements fewer per job).
    if (firstAsk.length && others.length < granted.length) return admitted(em, others, superseded, opts.start);
    const [own]: Array<{ state: string; ahead: number }> = await queryPrepared(
      em,
      `SELECT s.state,
              (SELECT count(*)::int FROM execution_slots w
                WHERE w.organization_id = s.organization_id AND w.state = 'WAITING'
                  AND (w.queued_at, w.job_id) < (s.queued_at, s.job_id)) AS ahead
         FROM execution_slots s WHERE s.job_kind = $1 AND s.job_id = $2`,
      [job.kind, job.jobId],
    );
    if (own.state === 'HOLDING') {
      await queryPrepared(
        em,
        `UPDATE ${kind.table} SET status_detail = NULL
          WHERE ${kind.idColumn} = $1 AND status = 'QUEUED' AND status_detail->>'reason' = $2`,
        [job.jobId, WAITING_REASON],
      );
      return admitted(em, others, superseded, opts.start);
    }
    const waiting = describeWaiting(row, own.ahead, opts.limit, queue);
    await queryPrepared(
      em,
      `UPDATE ${kind.table} SET status_detail = $2, updated_at = now() WHERE ${kind.idColumn} = $1 AND status = 'QUEUED'`,
      [job.jobId, JSON.stringify(waitingDetail(waiting))],
    );
    return { outcome: 'waiting', ...waiting, granted: others, ...(superseded ? { superseded } : {}) };
  });
}

/** The answer of a job that holds its slot, started by `start` (in the same transaction) when given one. */
async function admitted(
  em: EntityManager,
  others: SlotGrant[],
  superseded: Superseded | undefined,
  start: ((em: EntityManager) => Promise<string | undefined>) | undefined,
): Promise<Admission> {
  const status = start ? { status: await start(em) } : {};
  return { outcome: 'admitted', granted: others, ...(superseded ? { superseded } : {}), ...status };
}

/**
 * Within a key, first in first out, whichever workflow asks first: a run's first ask takes a place in the queue
 * for the older runs of its key whose workflows have not asked yet (QUEUED, first attempt, never waited), so
 * that it waits behind them. Each such place is taken over by its run's own first ask (`asked`).
 */
async function placeOlderRunsOfKey(em: EntityManager, job: SlotJob, row: JobRow & { key: string }): Promise<void> {
  // Workflow ids as workflowIdOf(RUN_JOB.resourceKind(run), run_id) makes them: `<kind>-run-<run id>`.
  const ofResource = row.resource_kind === 'assistant' ? `j.kind = 'assistant' AND j.assistant_id` : 'j.resource_id';
  await queryPrepared(
    em,
    `INSERT INTO execution_slots
            (job_kind, job_id, organization_id, workflow_id, state, queued_at, resource_id, concurrency_key,
             in_parent_slot, asked)
     SELECT 'run', j.run_id, j.organization_id, j.kind || '-run-' || j.run_id, 'WAITING', j.created_at, $1, $2,
            false, false
       FROM runs j
      WHERE ${ofResource} = $1 AND j.status = 'QUEUED' AND j.attempt = 1 AND j.status_detail IS NULL
        AND (j.created_at, j.run_id) < ($3, $4) AND coalesce(j.concurrency_key, $5, '') = $2
     ON CONFLICT (job_kind, job_id) DO NOTHING`,
    [row.resource_id, row.key, row.created_at, job.jobId, row.concurrency?.key ?? null],
  );
}

/**
 * A run its key's strategy `skip` skips: its place goes, and its status detail says why at once (its workflow
 * records the end next), so that no newer run of its key takes a place for it meanwhile.
 */
async function skip(em: EntityManager, job: SlotJob, message: string): Promise<void> {
  await queryPrepared(em, `DELETE FROM execution_slots WHERE job_kind = $1 AND job_id = $2`, [job.kind, job.jobId]);
  await queryPrepared(em, `UPDATE runs SET status_detail = $2 WHERE run_id = $1 AND status = 'QUEUED'`, [
    job.jobId,
    JSON.stringify({ reason: 'Cancelled', message }),
  ]);
}

/**
 * The strategy of a run's resource when the run's key is at its limit: skip the run, or supersede the oldest.
 * Only the runs of its key older than it count (a newer one's place is there only if it asked first).
 */
async function applyStrategy(
  em: EntityManager,
  job: SlotJob,
  row: JobRow & { concurrency: Concurrency; key: string },
): Promise<{ skipped?: string; superseded?: Superseded }> {
  const others: Array<{ job_id: string; kind: string }> = await queryPrepared(
    em,
    `SELECT job_id, (SELECT r.kind FROM runs r WHERE r.run_id = execution_slots.job_id) AS kind
       FROM execution_slots
      WHERE resource_id = $1 AND concurrency_key = $2 AND (queued_at, job_id) < ($4, $3) AND ${LIVE_PLACE}
      ORDER BY queued_at, job_id`,
    [row.resource_id, row.key, job.jobId, row.created_at],
  );
  const { limit, strategy } = row.concurrency;
  if (others.length < limit) return {};
  const scope = `concurrency key ${JSON.stringify(row.key)} of ${row.resource_kind} ${row.resource_id}`;
  if (strategy === 'skip') {
    return { skipped: `${scope} (strategy skip: ${others.length} of its ${limit} runs are queued or running)` };
  }
  return {
    superseded: {
      runs: others
        .slice(0, others.length - limit + 1)
        .map((o) => ({ jobId: o.job_id, run_id: o.job_id, kind: o.kind })),
      requestedBy: `${scope} (strategy cancel_in_progress: superseded by run ${job.jobId})`,
    },
  };
}

/**
 * Gives up the job's slot (or its place in the queue) and grants the freed slots to the oldest waiters of its
 * organization, whom the caller signals. Repeatable: a job without a row releases nothing.
 */
export async function releaseSlot(ds: DataSource, job: SlotJob, opts: { limit: number }): Promise<SlotGrant[]> {
  return ds.transaction((em) => releaseSlotIn(em, job, opts));
}

/**
 * releaseSlot within the caller's transaction `em` (e.g. its job's terminal write: the slot goes as it ends).
 * `organizationId`: the job's, when the caller has its row already (one statement fewer).
 */
export async function releaseSlotIn(
  em: EntityManager,
  job: SlotJob,
  opts: { limit: number; organizationId?: string },
): Promise<SlotGrant[]> {
  let organizationId = opts.organizationId;
  if (organizationId === undefined) {
    const [row]: Array<{ organization_id: string }> = await queryPrepared(
      em,
      `SELECT organization_id FROM execution_slots WHERE job_kind = $1 AND job_id = $2`,
      [job.kind, job.jobId],
    );
    if (!row) return [];
    organizationId = row.organization_id;
  }
  await lockOrganization(em, organizationId);
  return releaseUnderLock(em, job, organizationId, opts.limit);
}

/** The release, its organization locked: the job's row deleted, and what that freed granted to the oldest waiters. */
async function releaseUnderLock(
  em: EntityManager,
  job: SlotJob,
  organizationId: string,
  limit: number,
): Promise<SlotGrant[]> {
  // TypeORM answers a DELETE as [rows, count]. No row (released meanwhile, or never taken): nothing to give back.
  const [, deleted]: [unknown[], number] = await queryPrepared(
    em,
    `DELETE FROM execution_slots WHERE job_kind = $1 AND job_id = $2`,
    [job.kind, job.jobId],
  );
  return deleted ? (await grantFreeSlots(em, organizationId, limit)).granted : [];
}

/** The slot rows (held or waited for) untouched for `olderThanSeconds`: the reconciler checks their workflows. */
export async function staleSlotHolders(
  ds: DataSource,
  opts: { olderThanSeconds: number; limit: number },
): Promise<SlotGrant[]> {
  const rows: Array<{ job_kind: AdmittedKind; job_id: string; workflow_id: string }> = await queryPrepared(
    ds,
    `SELECT job_kind, job_id, workflow_id FROM execution_slots
      WHERE coalesce(granted_at, queued_at) < now() - make_interval(secs => $1)
      ORDER BY coalesce(granted_at, queued_at) LIMIT $2`,
    [opts.olderThanSeconds, opts.limit],
  );
  return rows.map((r) => ({ kind: r.job_kind, jobId: r.job_id, workflowId: r.workflow_id }));
}

/** The organization's queue (under its lock): its waiters in order, what holds slots, its resources' limits. */
interface Queue {
  waiters: Waiter[];
  holdings: Holdings;
  limits: Map<string, ResourceLimits>;
}

/**
 * The organization's free slots (under its lock) go to its eligible waiters (admission-queue.ts); answers them.
 * Reads only as much of the queue as the choice needs: with no slot free, the waiters in their parent's slot
 * alone; with some, the oldest few first, and the whole window only when a resource's limit or its keys'
 * turns (which may reach past them) hold some of those back. `ownResourceId`: whose limits to read as well.
 */
async function grantFreeSlots(
  em: EntityManager,
  organizationId: string,
  limit: number,
  ownResourceId: string | null = null,
): Promise<{ granted: SlotGrant[]; queue: Queue }> {
  const page = await loadHoldersAndPage(em, organizationId, limit);
  const { held } = page;
  const holdingsNow = () => {
    const holdings = new Holdings();
    for (const h of held) holdings.add(h.resource_id, h.concurrency_key, h.n, h.in_parent_slot);
    return holdings;
  };
  const choose = async (waiters: Waiter[], first: number) => {
    const ids = [ownResourceId, ...held.map((h) => h.resource_id), ...waiters.map((w) => w.resourceId)];
    // A release that finds no waiter: nothing to choose, no limit to read (an ask reads its own resource's,
    // which say why it waits).
    const limits =
      waiters.length || ownResourceId
        ? await loadLimits(em, [...new Set(ids.filter((id): id is string => !!id))])
        : new Map<string, ResourceLimits>();
    const queue: Queue = { waiters, holdings: holdingsNow(), limits };
    return { queue, chosen: chooseGrants(waiters, queue.holdings, limits, limit), first };
  };
  const free = limit - holdingsNow().total;
  let choice = await choose(page.waiters, page.first);
  // The page decides as the window would when it is the whole queue, or when it filled the share and no
  // keys' turns apply (past it, only waiters in their parent's slot can still be granted: those are read).
  const { waiters } = choice.queue;
  const whole = waiters.length < choice.first;
  if (free > 0 && !whole && (choice.queue.holdings.total < limit || waiters.some((w) => w.key !== null)))
    choice = await choose(await loadWaiters(em, organizationId, QUEUE_WINDOW), QUEUE_WINDOW);
  const { chosen, queue } = choice;
  if (chosen.length) {
    await queryPrepared(
      em,
      `UPDATE execution_slots SET state = 'HOLDING', granted_at = clock_timestamp()
        WHERE (job_kind, job_id) IN (SELECT * FROM unnest($1::text[], $2::uuid[]))`,
      [chosen.map((w) => w.kind), chosen.map((w) => w.jobId)],
    );
  }
  const granted = chosen.map((w) => ({ kind: w.kind as AdmittedKind, jobId: w.jobId, workflowId: w.workflowId }));
  return { granted, queue };
}

/** Grants what the organization's queue allows now (after a resource's queue is resumed); answers the grants. */
export async function grantWaiting(ds: DataSource, organizationId: string, opts: { limit: number }) {
  return ds.transaction(async (em) => {
    await lockOrganization(em, organizationId);
    return (await grantFreeSlots(em, organizationId, opts.limit)).granted;
  });
}
