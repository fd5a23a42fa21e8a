// Why a job waits for its execution slot (src/jobs/admission.ts): what holds it back (its organization's share,
// its resource's paused queue, total limit or key limit), said in its status detail while it waits.
import type { Concurrency } from '../persistence/entities/code-resource';
import { blockerOf, type Blocker, type Holdings, type ResourceLimits, type Waiter } from './admission-queue';

/** The waiting job as admission read it: its resource and key (null: none, or no concurrency declared). */
interface WaitingJob {
  resource_id: string | null;
  resource_kind: string | null;
  concurrency: Concurrency | null;
  key: string | null;
}

/** The reason in the status detail of a job that waits for a slot. */
export const WAITING_REASON = 'WaitingForExecutionSlot';

/** Why a waiting job waits: the organization's share, or its resource's queue (paused, total limit, key limit). */
export type WaitingFor = 'organization' | Blocker;

export interface Waiting {
  /** Jobs holding a slot in the scope that holds this one back (the organization, the resource, the key). */
  executing: number;
  /** Jobs of the organization that wait before this one. */
  ahead: number;
  limit: number;
  waitingFor: WaitingFor;
  message: string;
}

/** Why the job (still waiting after the grants) waits, from the queue as the grants left it. */
export function describeWaiting(
  row: WaitingJob,
  ahead: number,
  orgLimit: number,
  queue: { holdings: Holdings; limits: Map<string, ResourceLimits> },
): Waiting {
  const waiter: Waiter = { kind: '', jobId: '', workflowId: '', resourceId: row.resource_id, key: row.key };
  const blocker = blockerOf(waiter, queue.holdings, queue.limits);
  const of = `its ${row.resource_kind} ${row.resource_id}`;
  const resourceId = row.resource_id!;
  switch (blocker) {
    case 'paused':
      return {
        waitingFor: 'paused',
        executing: queue.holdings.ofResource(resourceId),
        ahead,
        limit: 0,
        message: `Waiting: the queue of ${of} is paused (POST .../queue/resume starts it again)`,
      };
    case 'resource': {
      const executing = queue.holdings.ofResource(resourceId);
      const limit = row.concurrency!.total_limit!;
      return {
        waitingFor: 'resource',
        executing,
        ahead,
        limit,
        message: `Waiting for a slot of ${of}: ${executing} of its runs are executing (concurrency.total_limit=${limit})`,
      };
    }
    case 'key': {
      const executing = queue.holdings.ofKey(resourceId, row.key!);
      const limit = row.concurrency!.limit;
      return {
        waitingFor: 'key',
        executing,
        ahead,
        limit,
        message:
          `Waiting for a slot of concurrency key ${JSON.stringify(row.key)} of ${of}: ${executing} of its runs ` +
          `are executing (concurrency.limit=${limit})`,
      };
    }
    default: {
      const executing = queue.holdings.total;
      return {
        waitingFor: 'organization',
        executing,
        ahead,
        limit: orgLimit,
        message:
          `Waiting for an execution slot of its organization: ${executing} of its runs and builds are executing ` +
          `(ORG_MAX_CONCURRENT_RUNS=${orgLimit}); ${ahead} more wait before this one`,
      };
    }
  }
}

/** Whether a QUEUED job's status detail says its resource's queue is paused (it waits until a resume). */
export const heldByPausedQueue = (detail: unknown): boolean =>
  (detail as { waiting_for?: unknown } | null)?.waiting_for === 'paused';

/** The status detail of a waiting job: what it waits for, the setting that decides it, how many execute. */
export function waitingDetail(w: Waiting): Record<string, unknown> {
  return {
    reason: WAITING_REASON,
    message: w.message,
    waiting_for: w.waitingFor,
    executing: w.executing,
    limit: w.limit,
    ahead: w.ahead,
  };
}
