// The retry policy of runs lost with their worker (docs/run-control.md#retries-of-lost-runs): what a resource or
// a run declares, and the one decision the run workflow takes after each attempt (retry, and after how long, or
// end). Pure: the api validates and stores policies with it, workflows decide with it.

/** The attempts a policy may allow at most. */
export const MAX_RUN_ATTEMPTS = 10;

/** Which endings of an attempt a policy retries: WorkerLost, TimeLimitExceeded, FAILED (the code's own failure). */
export const RETRY_ON = ['WorkerLost', 'TimeLimit', 'Failed'] as const;
export type RetryOn = (typeof RETRY_ON)[number];

/** A run's retry policy, as stored on the resource and the run and passed to its workflow (defaults filled in). */
export interface RetryPolicy {
  /** Attempts in all, the first included: 1 never retries. */
  max_attempts: number;
  /** Seconds before the second attempt. */
  initial_interval: number;
  /** Each wait is the previous one times this. */
  backoff: number;
  /** Seconds no wait exceeds. */
  max_interval: number;
  on: RetryOn[];
}

export const RETRY_DEFAULTS: RetryPolicy = {
  max_attempts: 1,
  initial_interval: 1,
  backoff: 2,
  max_interval: 60,
  on: ['WorkerLost'],
};

/** A policy as a request gives it (every member optional). */
export type RetryPolicyRequest = Partial<RetryPolicy>;

/** The policy with its defaults; an error message (and the member it names) when it contradicts itself. */
export function completePolicy(
  request: RetryPolicyRequest,
): { policy: RetryPolicy } | { error: string; member: keyof RetryPolicy } {
  const policy: RetryPolicy = { ...RETRY_DEFAULTS, ...request, on: [...new Set(request.on ?? RETRY_DEFAULTS.on)] };
  if (request.max_interval === undefined) policy.max_interval = Math.max(policy.max_interval, policy.initial_interval);
  if (policy.max_interval < policy.initial_interval) {
    return {
      error: `max_interval (${policy.max_interval} s) must not be shorter than initial_interval (${policy.initial_interval} s)`,
      member: 'max_interval',
    };
  }
  return { policy };
}

/** The ending of one attempt, as far as the decision needs it (a RunEnding). */
export interface AttemptEnding {
  status: string;
  reason?: string;
}

/** What an ending is, in the policy's words (`on`); undefined for an ending no policy retries (cancelled, succeeded). */
export function retryReasonOf(ending: AttemptEnding): RetryOn | undefined {
  if (ending.reason === 'WorkerLost') return 'WorkerLost';
  if (ending.reason === 'TimeLimitExceeded') return 'TimeLimit';
  if (ending.status === 'FAILED') return 'Failed';
  return undefined;
}

/** The wait before attempt `attempt + 1`: initial_interval × backoff^(attempt − 1), at most max_interval. */
export function retryDelaySeconds(policy: RetryPolicy, attempt: number): number {
  return Math.min(policy.initial_interval * policy.backoff ** (attempt - 1), policy.max_interval);
}

/** After attempt `attempt` ended so: the seconds to wait before the next one, or undefined to end the run. */
export function nextRetry(
  policy: RetryPolicy | null | undefined,
  attempt: number,
  ending: AttemptEnding,
): { delaySeconds: number; reason: RetryOn } | undefined {
  if (!policy || attempt >= Math.min(policy.max_attempts, MAX_RUN_ATTEMPTS)) return undefined;
  const reason = retryReasonOf(ending);
  if (!reason || !policy.on.includes(reason)) return undefined;
  return { delaySeconds: retryDelaySeconds(policy, attempt), reason };
}
