// Concurrency keys and limits (docs/run-control.md#concurrency-keys-and-limits): the `concurrency` member of
// structures, functions, tools and assistants, a run's `concurrency_key`, and the run queue of a resource: what
// runs and waits per key, pause and resume.
import type { CodeResourceKind, Concurrency } from '../../persistence/entities/code-resource';
import { iso } from '../../persistence/scoped';
import { findCodeResource, KIND_LABEL } from '../../services/code/code-resources';
import type { DataSource } from 'typeorm';
import { findAssistant } from '../../services/assistants/assistants';
import type { Caller } from '../../services/caller';
import {
  assistantQueue,
  codeResourceQueue,
  pauseRunQueue,
  resumeRunQueue,
  runQueueOf,
  type QueueOwner,
  type RunQueue,
} from '../../services/code/run-queues';
import { route } from '../http/route';
import { defineSchema, nullableTimestamp, uuid } from '../schemas/registry';
import { ConcurrencySchema } from './concurrency-fields';

// Their importers load the queue's routes with them, which keeps the routes' order in the OpenAPI document.
export { ConcurrencyKeySchema, ConcurrencySchema, normalizedConcurrency } from './concurrency-fields';

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

type QueueKind = CodeResourceKind | 'assistant';

const findQueueOwner = async (ds: DataSource, caller: Caller, kind: QueueKind, id: string): Promise<QueueOwner> =>
  kind === 'assistant'
    ? assistantQueue(await findAssistant(ds, caller, id))
    : codeResourceQueue(await findCodeResource(ds, caller, kind, id));

for (const kind of ['structure', 'function', 'tool', 'assistant'] as QueueKind[]) {
  const Label = kind === 'assistant' ? 'Assistant' : KIND_LABEL[kind];
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
      const resource = await findQueueOwner(deps.ds, caller, kind, p[idParam]);
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
      const resource = await pauseRunQueue(deps.ds, await findQueueOwner(deps.ds, caller, kind, p[idParam]));
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
      const resource = await resumeRunQueue(deps, await findQueueOwner(deps.ds, caller, kind, p[idParam]));
      return { status: 200, body: present(await runQueueOf(deps.ds, resource), resource.concurrency) };
    },
  });
}
