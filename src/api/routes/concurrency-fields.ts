// The members of run control's concurrency (docs/run-control.md#concurrency-keys-and-limits) that records and
// requests share: a resource's `concurrency` (structures, functions, tools, assistants) and a run's
// `concurrency_key`. Schemas only, no routes (the queue's routes are run-queues.ts).
import type { Concurrency } from '../../persistence/entities/code-resource';
import { defineSchema } from '../schemas/registry';

/** Most runs one key (or the resource) may execute at once: well above any organization's share. */
const MAX_LIMIT = 10_000;

export const ConcurrencyKeySchema = {
  type: 'string',
  minLength: 1,
  maxLength: 255,
  description:
    "The run's concurrency key (e.g. a customer id): at most the resource's `concurrency.limit` runs of one key " +
    'execute at once. Without one, the resource\'s `concurrency.key` (default "").',
} as const;

export const ConcurrencySchema = defineSchema('Concurrency', {
  type: ['object', 'null'],
  required: ['limit'],
  additionalProperties: false,
  description:
    'How many runs execute at once (docs/run-control.md#concurrency-keys-and-limits); null or absent: only the ' +
    "organization's share limits them. Runs past a limit wait QUEUED, holding no worker.",
  properties: {
    limit: {
      type: 'integer',
      minimum: 1,
      maximum: MAX_LIMIT,
      description: 'Runs per concurrency key STARTING or RUNNING at once.',
    },
    key: {
      type: 'string',
      maxLength: 255,
      description: 'The key of runs created without a `concurrency_key` (default "": they share one key).',
    },
    strategy: {
      type: 'string',
      enum: ['queue', 'cancel_in_progress', 'skip'],
      description:
        'A new run of a key at its limit: `queue` (default) waits, first in first out per key, round-robin across keys; ' +
        '`cancel_in_progress` cancels the oldest of its key (CANCELLED, the reason in status_detail) and takes its place; ' +
        '`skip` ends CANCELLED at once, the reason in status_detail.',
    },
    total_limit: {
      type: 'integer',
      minimum: 1,
      maximum: MAX_LIMIT,
      description: 'Runs of the resource, all keys together, STARTING or RUNNING at once (default: no such limit).',
    },
  },
});

/** As stored: the strategy always named. */
export const normalizedConcurrency = (c: Partial<Concurrency> | null | undefined): Concurrency | null | undefined =>
  c ? ({ ...c, strategy: c.strategy ?? 'queue' } as Concurrency) : c;
