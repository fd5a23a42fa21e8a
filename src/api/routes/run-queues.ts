// Concurrency keys and limits (docs/run-control.md#concurrency-keys-and-limits): the `concurrency` member of
// structures, functions and tools, a run's `concurrency_key`, and the run queue of a resource: what runs and
// waits per key, pause and resume.
import type { CodeResourceKind, Concurrency } from '../../persistence/entities/code-resource';
import { iso } from '../../persistence/scoped';
import { findCodeResource, KIND_LABEL } from '../../services/code/code-resources';
import { pauseRunQueue, resumeRunQueue, runQueueOf, type RunQueue } from '../../services/code/run-queues';
import { route } from '../http/route';
import { defineSchema, nullableTimestamp, uuid } from '../schemas/registry';

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

const KeyQueueSchema = {
  type: 'object',
  required: ['key', 'running', 'queued', 'limit'],
  properties: {
    key: { type: ['string', 'null'], description: 'null when the resource declares no concurrency.' },
    running: { type: 'integer', description: 'Runs STARTING or RUNNING.' },
    queued: {
      type: 'integer',
      description: 'Runs QUEUED (waiting for their key, the resource, the organization, or a resume).',
    },
    limit: { type: ['integer', 'null'] },
  },
} as const;

const RunQueueSchema = defineSchema('RunQueue', {
  type: 'object',
  required: ['paused', 'paused_at', 'running', 'queued', 'total_limit', 'concurrency', 'keys'],
  properties: {
    paused: { type: 'boolean', description: 'While paused no run starts; queued runs wait.' },
    paused_at: nullableTimestamp,
    running: { type: 'integer' },
    queued: { type: 'integer' },
    total_limit: { type: ['integer', 'null'] },
    concurrency: ConcurrencySchema,
    keys: { type: 'array', items: KeyQueueSchema, description: 'Keys with open runs, by key.' },
  },
});

const present = (q: RunQueue, concurrency: Concurrency | null) => ({
  ...q,
  paused_at: iso(q.paused_at),
  concurrency,
});

for (const kind of ['structure', 'function', 'tool'] as CodeResourceKind[]) {
  const Label = KIND_LABEL[kind];
  const idParam = `${kind}_id`;
  const path = `/${kind}s/{${idParam}}/queue`;
  const params = { [idParam]: uuid };
  const tag = `${Label}s`;
  const responses = { 200: { description: 'The run queue', schema: RunQueueSchema } };

  route({
    operationId: `Get${Label}RunQueue`,
    method: 'get',
    path,
    tag,
    params,
    summary: `The ${kind}'s runs per concurrency key: running, queued and limits; whether the queue is paused.`,
    responses,
    handler: async ({ deps, caller, params: p }) => {
      const resource = await findCodeResource(deps.ds, caller, kind, p[idParam]);
      return { status: 200, body: present(await runQueueOf(deps.ds, resource), resource.concurrency) };
    },
  });

  route({
    operationId: `Pause${Label}RunQueue`,
    method: 'post',
    path: `${path}/pause`,
    tag,
    params,
    summary:
      `Pauses the ${kind}'s run queue: no run starts (new and queued runs wait QUEUED, their status_detail says ` +
      'the queue is paused); running ones go on. Repeatable.',
    responses,
    handler: async ({ deps, caller, params: p }) => {
      const resource = await pauseRunQueue(deps.ds, await findCodeResource(deps.ds, caller, kind, p[idParam]));
      return { status: 200, body: present(await runQueueOf(deps.ds, resource), resource.concurrency) };
    },
  });

  route({
    operationId: `Resume${Label}RunQueue`,
    method: 'post',
    path: `${path}/resume`,
    tag,
    params,
    summary: `Resumes the ${kind}'s run queue: queued runs start as the limits allow. Repeatable.`,
    responses,
    handler: async ({ deps, caller, params: p }) => {
      const resource = await resumeRunQueue(deps, await findCodeResource(deps.ds, caller, kind, p[idParam]));
      return { status: 200, body: present(await runQueueOf(deps.ds, resource), resource.concurrency) };
    },
  });
}
