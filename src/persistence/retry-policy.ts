// The retry policy of runs lost with their worker as resources and runs store it (docs/run-control.md#retries-of-lost-runs):
// its shape, bounds and defaults. The decisions taken with it are in src/temporal/retry-policy.ts.

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
