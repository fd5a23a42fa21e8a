// The retry policy in the api (docs/run-control.md#retries-of-lost-runs): the request member of structures,
// functions, tools and structure runs, and what a run's record says about its attempts. Every member is optional
// in requests and answers, so clients that do not know them parse the records unchanged.
import type { AttemptRecord, Run } from '../../persistence/entities/run';
import { iso } from '../../persistence/scoped';
import { MAX_RUN_ATTEMPTS, RETRY_DEFAULTS, RETRY_ON } from '../../temporal/retry-policy';
import { defineSchema, nullableTimestamp, type JsonSchema } from '../schemas/registry';

const MAX_INTERVAL_SECONDS = 3600;

const policyMembers = {
  max_attempts: {
    type: 'integer',
    minimum: 1,
    maximum: MAX_RUN_ATTEMPTS,
    description: `Attempts in all, the first included (default ${RETRY_DEFAULTS.max_attempts}: never retried; at most ${MAX_RUN_ATTEMPTS}).`,
  },
  initial_interval: {
    type: 'number',
    minimum: 0,
    maximum: MAX_INTERVAL_SECONDS,
    description: `Seconds before the second attempt (default ${RETRY_DEFAULTS.initial_interval}).`,
  },
  backoff: {
    type: 'number',
    minimum: 1,
    maximum: 10,
    description: `Each wait is the previous one times this (default ${RETRY_DEFAULTS.backoff}).`,
  },
  max_interval: {
    type: 'number',
    minimum: 0,
    maximum: MAX_INTERVAL_SECONDS,
    description: `Seconds no wait exceeds (default ${RETRY_DEFAULTS.max_interval}, or initial_interval if longer).`,
  },
  on: {
    type: 'array',
    items: { type: 'string', enum: [...RETRY_ON] },
    minItems: 1,
    maxItems: RETRY_ON.length,
    uniqueItems: true,
    description:
      'Which endings of an attempt are retried (default ["WorkerLost"]): `WorkerLost` (the worker running it was ' +
      'lost), `TimeLimit` (ERROR TimeLimitExceeded), `Failed` (the code exited non-zero: FAILED).',
  },
} as const;

const RetryPolicyRequest = defineSchema('RetryPolicyRequest', {
  type: 'object',
  additionalProperties: false,
  properties: policyMembers,
});

/** The request member; null removes a resource's policy, or runs a run without the resource's. */
export const retryPolicyMember = {
  oneOf: [RetryPolicyRequest, { type: 'null' }],
  description:
    'How runs lost with their worker (or, if asked, timed out or failed) are run again: docs/run-control.md#retries-of-lost-runs.',
} as const;

const RetryPolicy = defineSchema('RetryPolicy', {
  type: 'object',
  required: ['max_attempts', 'initial_interval', 'backoff', 'max_interval', 'on'],
  properties: policyMembers,
});

/** A resource's policy in its record. */
export const retryPolicyAnswer: JsonSchema = {
  oneOf: [RetryPolicy, { type: 'null' }],
  description: 'How its runs are retried (absent or null: never).',
};

const RunAttempt = defineSchema('RunAttempt', {
  type: 'object',
  required: ['attempt', 'status', 'reason', 'message', 'started_at', 'ended_at'],
  properties: {
    attempt: { type: 'integer', minimum: 1 },
    status: { type: 'string' },
    reason: {
      type: ['string', 'null'],
      description: 'WorkerLost, TimeLimitExceeded, Completed, ...; null until it ends.',
    },
    message: { type: ['string', 'null'] },
    started_at: { ...nullableTimestamp, description: 'When its process started (null: it never did).' },
    ended_at: nullableTimestamp,
  },
});

/** The members every kind of code run's record adds. */
export const runRetryProperties: Record<string, JsonSchema> = {
  attempt: { type: 'integer', minimum: 1, description: 'The attempt running, or the last one (from 1).' },
  retry_policy: { ...retryPolicyAnswer, description: 'The retry policy the run runs under (absent or null: none).' },
  attempts: {
    type: 'array',
    items: RunAttempt,
    description:
      'Runs with a retry policy: each attempt, oldest first, with how it ended (the last one, the run itself).',
  },
};

/** The attempts of a run: the earlier ones as recorded, then the current one (ended when the run has). */
function attemptsOf(r: Run): AttemptRecord[] {
  const detail = (r.status_detail ?? {}) as { reason?: string; message?: string | null; error?: string };
  const ended = r.completed_at !== null;
  const current: AttemptRecord = {
    attempt: r.attempt,
    status: r.status,
    reason: ended ? (detail.reason ?? null) : null,
    message: ended ? (detail.error ?? detail.message ?? null) : null,
    started_at: iso(r.started_at),
    ended_at: iso(r.completed_at),
  };
  return [...r.attempts, current];
}

/** `attempt` of every run; its policy and attempts when it has a policy. */
export const presentRunRetries = (r: Run) => ({
  attempt: r.attempt,
  ...(r.retry_policy ? { retry_policy: r.retry_policy, attempts: attemptsOf(r) } : {}),
});
