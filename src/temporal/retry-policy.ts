// The retry policy of runs lost with their worker (docs/run-control.md#retries-of-lost-runs): what a resource or
// a run declares, and the one decision the run workflow takes after each attempt (retry, and after how long, or
// end). Pure: the api validates and stores policies with it, workflows decide with it. Its stored shape:
// src/persistence/retry-policy.ts.
import {
  MAX_RUN_ATTEMPTS,
  RETRY_DEFAULTS,
  type RetryOn,
  type RetryPolicy,
  type RetryPolicyRequest,
} from '../persistence/retry-policy';

export { MAX_RUN_ATTEMPTS, RETRY_DEFAULTS, RETRY_ON } from '../persistence/retry-policy';
export type { RetryOn, RetryPolicy, RetryPolicyRequest } from '../persistence/retry-policy';

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
