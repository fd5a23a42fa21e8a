// Structure runs: each one is a workflow (structure-run-<uuid>) that runs the main file of the structure's
// latest successful deployment. The per-structure webhook starts runs too.
import getRawBody from 'raw-body';
import { RUN_STATUSES, Run } from '../../persistence/entities/run';
import { iso } from '../../persistence/scoped';
import { findRunOfKind } from '../../services/code/runs/code-runs';
import { cancelStructureRun, createStructureRun, findStructure } from '../../services/code/runs/structure-runs';
import { MAX_ARG_BYTES } from '../../services/code/runs/begin';
import { badRequest, conflict, payloadTooLarge } from '../../errors';
import { route } from '../http/route';
import { presentRunRetries, retryPolicyMember, runRetryProperties } from './run-retries';
import { codeRunRecordRoutes, replayedFrom } from './code-run-records';
import { idempotencyKeyField, presentIdempotencyKey } from './idempotency-fields';
import { EnvVarSchema, presentCodeResource } from './code-resources';
import { ConcurrencyKeySchema } from './run-queues';
import { defineSchema, nullableTimestamp, ref, timestamp, uuid } from '../schemas/registry';

const TAG = 'Structure runs';

export const StructureRunSchema = defineSchema('StructureRun', {
  type: 'object',
  required: [
    'structure_run_id',
    'structure_id',
    'status',
    'args',
    'created_at',
    'created_by',
    'updated_at',
    'started_at',
    'completed_at',
  ],
  properties: {
    structure_run_id: uuid,
    structure_id: uuid,
    deployment_id: uuid,
    status: { type: 'string', enum: [...RUN_STATUSES] },
    status_detail: {
      description:
        'QUEUED while waiting for an execution slot of its organization or of its concurrency key: `{reason: "WaitingForExecutionSlot", message, waiting_for, executing, limit, ahead}`; SUCCEEDED/FAILED: `{reason: "Completed", message, exit_code}`; ERROR: `{reason, error}`; CANCELLED: `{reason: "Cancelled", message, requested_by}`. With `output_lost: {log_lines, reason}` when output the run wrote could not be stored (docs/code-runs.md).',
    },
    args: { type: 'array', items: { type: 'string' } },
    env_vars: { type: 'array', items: EnvVarSchema },
    output: { description: '`payload.output_task_output` of the last FinishStructureRunEvent the run posted.' },
    output_timestamp: { type: 'number', description: '`timestamp` of that event (epoch seconds).' },
    created_by: { type: 'string' },
    replayed_from_run_id: replayedFrom,
    idempotency_key: idempotencyKeyField,
    concurrency_key: ConcurrencyKeySchema,
    ...runRetryProperties,
    created_at: timestamp,
    updated_at: timestamp,
    started_at: nullableTimestamp,
    completed_at: nullableTimestamp,
  },
});

export const presentStructureRun = (r: Run) => ({
  structure_run_id: r.run_id,
  structure_id: r.resource_id,
  ...(r.deployment_id ? { deployment_id: r.deployment_id } : {}),
  status: r.status,
  ...(r.status_detail != null ? { status_detail: r.status_detail } : {}),
  args: r.args,
  env_vars: r.env_vars,
  ...(r.output != null ? { output: r.output } : {}),
  ...(r.output_timestamp != null ? { output_timestamp: r.output_timestamp } : {}),
  created_by: r.created_by,
  ...(r.replayed_from_run_id ? { replayed_from_run_id: r.replayed_from_run_id } : {}),
  ...presentIdempotencyKey(r),
  ...(r.concurrency_key !== null ? { concurrency_key: r.concurrency_key } : {}),
  ...presentRunRetries(r),
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
  started_at: iso(r.started_at),
  completed_at: iso(r.completed_at),
});

const runPath = { structure_run_id: uuid } as const;

route({
  operationId: 'CreateStructureRun',
  needsDiskSpace: true,
  method: 'post',
  path: '/structures/{structure_id}/runs',
  tag: TAG,
  summary:
    "Runs the main file of the structure's latest successful deployment with `args` as argv (no shell) and " +
    "`env_vars` after the structure's own (`secret_ref` values are secret ids, resolved when the run starts). " +
    '409 when the structure has no successful deployment.',
  params: { structure_id: uuid },
  bodyRequired: true,
  body: defineSchema('CreateStructureRunRequest', {
    type: 'object',
    required: ['args'],
    properties: {
      args: {
        type: 'array',
        items: { type: 'string' },
        maxItems: 1000,
        description: 'Required (may be empty): one argv entry each.',
      },
      env_vars: { type: 'array', items: EnvVarSchema, maxItems: 500, default: [] },
      concurrency_key: ConcurrencyKeySchema,
      retry_policy: {
        ...retryPolicyMember,
        description:
          "Instead of the structure's retry policy (null: this run is never retried): docs/run-control.md#retries-of-lost-runs.",
      },
    },
  }),
  responses: { 201: { description: 'The run, QUEUED', schema: StructureRunSchema } },
  handler: async ({ deps, caller, params, body }) => {
    const run = await createStructureRun(deps, caller, params.structure_id, body);
    return { status: 201, body: presentStructureRun(run) };
  },
  idempotent: async ({ deps, caller, record }) => ({
    status: 200,
    body: presentStructureRun(await findRunOfKind(deps.ds, caller, 'structure', record.id)),
  }),
});

route({
  operationId: 'CancelStructureRun',
  method: 'post',
  path: '/structure-runs/{structure_run_id}/cancel',
  tag: TAG,
  summary:
    "Stops the run's process group and ends it CANCELLED; answers once that is recorded (waits up to 10 s, then " +
    'answers with the current record). 200 again for a CANCELLED run; 409 for a run that ended otherwise.',
  params: runPath,
  responses: { 200: { description: 'Run', schema: StructureRunSchema } },
  handler: async ({ deps, caller, params }) => ({
    status: 200,
    body: presentStructureRun(await cancelStructureRun(deps, caller, params.structure_run_id)),
  }),
});

// ---- The per-structure webhook: `?api_key=` is accepted because webhook senders cannot set headers ----

// The interface documents the Structure shape as the answer (and the generated client parses it so); the run
// that was started is what a caller can follow, so its id rides along.
const WebhookAnswer = defineSchema('StructureWebhookAnswer', {
  allOf: [
    ref('Structure'),
    {
      type: 'object',
      required: ['structure_run_id'],
      properties: {
        structure_run_id: {
          ...uuid,
          description: 'The run this call started (GET /structure-runs/{structure_run_id}).',
        },
      },
    },
  ],
});

for (const method of ['get', 'post'] as const) {
  route({
    operationId: method === 'get' ? 'InvokeStructureWebhookGet' : 'InvokeStructureWebhookPost',
    method,
    path: '/structures/{structure_id}/webhook',
    tag: TAG,
    auth: 'apiKeyOrQuery',
    summary:
      (method === 'get'
        ? 'Starts a run with no arguments. '
        : `Starts a run whose first (only) argument is the request body as text (any content type, at most ${MAX_ARG_BYTES} bytes: one argv string). `) +
      "The key may be given as `?api_key=`. 409 when the structure's `webhook_enabled` is false. Answers with the " +
      'Structure (as the interface documents) plus `structure_run_id`, the run that was started.',
    params: { structure_id: uuid },
    ...(method === 'post'
      ? { rawBody: { contentType: '*/*', description: 'Passed to the structure as its first argument.' } }
      : {}),
    responses: { 200: { description: 'The structure, and the run that was started', schema: WebhookAnswer } },
    handler: async ({ ctx, deps, caller, params }) => {
      const structure = await findStructure(deps.ds, caller, params.structure_id);
      if (!structure.webhook_enabled) {
        throw conflict(
          `Webhooks are disabled for structure ${structure.resource_id}; set webhook_enabled: true to allow them`,
        );
      }
      const args: string[] = [];
      if (method === 'post') {
        try {
          args.push(await getRawBody(ctx.req, { limit: MAX_ARG_BYTES, encoding: 'utf8' }));
        } catch (err) {
          if ((err as { type?: string }).type === 'entity.too.large') throw payloadTooLarge(MAX_ARG_BYTES);
          throw badRequest('Could not read the request body', '/body');
        }
      }
      const run = await createStructureRun(deps, caller, structure.resource_id, { args, env_vars: [] });
      return { status: 200, body: { ...presentCodeResource(structure), structure_run_id: run.run_id } };
    },
  });
}

codeRunRecordRoutes({
  kind: 'structure',
  tag: TAG,
  schema: StructureRunSchema,
  present: (_ds, runs) => runs.map(presentStructureRun),
  summaries: {
    get: "A structure run. A run's own credential (GT_CLOUD_API_KEY) may read it.",
    logs:
      "The run's stdout and stderr lines, in the order they were read (interleaved; lines over 16 384 characters " +
      'are split). At most RUN_LOG_LIMIT_BYTES per run.',
  },
});
