// Retries of lost runs (docs/run-control.md#retries-of-lost-runs): the policy a run runs under (its request's,
// else its resource's), and the write that sends a run whose attempt ended back to QUEUED for its next attempt,
// with the attempt's ending recorded and a RunRetrying SYSTEM event, through the job kernel's one transition.
import type { DataSource, EntityManager } from 'typeorm';
import { badRequest } from '../../../errors';
import type { AttemptRecord, RunStatus } from '../../../persistence/entities/run';
import type { CodeResource } from '../../../persistence/entities';
import { iso } from '../../../persistence/scoped';
import { RUN_JOB } from '../../../jobs/kinds';
import { transition } from '../../../jobs/transition';
import { completePolicy, type RetryPolicy, type RetryPolicyRequest } from '../../../temporal/retry-policy';
import type { RunEnding, RunRetryInput } from '../../../temporal/contracts';
import { appendEvents } from './state';

/** A request's policy with its defaults (null stays null: no retries); 400 naming `where` when it contradicts itself. */
export function requestedPolicy(request: RetryPolicyRequest | null, where: string): RetryPolicy | null {
  if (request === null) return null;
  const completed = completePolicy(request);
  if ('error' in completed) throw badRequest(completed.error, `${where}/${completed.member}`);
  return completed.policy;
}

/** The policy a new run of `resource` runs under: the request's (null: none) when it gives one, else the resource's. */
export function runPolicy(
  resource: Pick<CodeResource, 'retry_policy'>,
  request: RetryPolicyRequest | null | undefined,
  where: string,
): RetryPolicy | null {
  return request === undefined ? resource.retry_policy : requestedPolicy(request, where);
}

/** How an attempt ended, in the record's words. */
function attemptRecord(attempt: number, ending: RunEnding, startedAt: Date | null, endedAt: Date): AttemptRecord {
  const reason = 'reason' in ending ? ending.reason : ending.status === 'CANCELLED' ? 'Cancelled' : 'Completed';
  const message = 'error' in ending ? ending.error : 'message' in ending ? ending.message : null;
  return { attempt, status: ending.status, reason, message, started_at: iso(startedAt), ended_at: iso(endedAt)! };
}

/**
 * Attempt `attempt` of the run ended with `ending`, which its policy retries: the run goes back to QUEUED as
 * attempt `attempt + 1` (its execution claim and start time cleared for that attempt), the ending is appended
 * to `attempts`, a RunRetrying SYSTEM event says why and when. Repeatable: a run already at the next attempt is
 * left as it is. Answers whether the run waits for its next attempt (false: it ended meanwhile). `resetAttempt`:
 * what else a kind of run clears for its next attempt, in the same transaction.
 */
export async function markRetrying(
  ds: DataSource,
  input: RunRetryInput,
  resetAttempt?: (em: EntityManager) => Promise<unknown>,
): Promise<boolean> {
  const { runId, attempt, ending } = input;
  return ds.transaction(async (em) => {
    const [row]: Array<{ status: RunStatus; attempt: number; attempts: AttemptRecord[]; started_at: Date | null }> =
      await em.query(`SELECT status, attempt, attempts, started_at FROM runs WHERE run_id = $1 FOR UPDATE`, [runId]);
    if (!row || RUN_JOB.terminal.includes(row.status)) return false;
    if (row.attempt > attempt) return true; // recorded by an earlier try of this write
    const now = new Date();
    const next = attempt + 1;
    const retryAt = new Date(now.getTime() + input.delaySeconds * 1000);
    const ended = attemptRecord(attempt, ending, row.started_at, now);
    const detail = {
      reason: 'Retrying',
      message:
        `Attempt ${attempt} ended ${ending.status} (${ended.reason}); attempt ${next} starts after ` +
        `${input.delaySeconds} s (retry_policy.on: ${input.reason})`,
      attempt: next,
      retry_at: iso(retryAt),
    };
    const moved = await transition(
      em,
      RUN_JOB,
      runId,
      'QUEUED',
      {
        status_detail: detail,
        attempt: next,
        attempts: [...row.attempts, ended],
        started_at: null,
        execution_attempt: null,
        execution_ending: null,
      },
      `attempt = ${Number(attempt)}`,
    );
    if (!moved) return false;
    await resetAttempt?.(em);
    await appendEvents(em, runId, [
      {
        type: 'RunRetrying',
        origin: 'SYSTEM',
        payload: {
          status: 'QUEUED',
          attempt: next,
          reason: input.reason,
          previous_attempt: ended,
          retry_in_seconds: input.delaySeconds,
          retry_at: iso(retryAt),
        },
      },
    ]);
    return true;
  });
}
