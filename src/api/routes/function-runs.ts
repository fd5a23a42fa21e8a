// Function runs: executing a function runs its handler once (a run of kind 'function' through the run
// workflow) and answers with the handler's result; runs are listed and read like structure runs.
import type { DataSource } from 'typeorm';
import { RUN_STATUSES, Run } from '../../persistence/entities/run';
import { iso } from '../../persistence/scoped';
import { executeFunction, queryParamsOf, runtimePathsOf } from '../../services/code/runs/function-runs';
import { findRunOfKind } from '../../services/code/runs/code-runs';
import { functionExecutionError } from '../../errors';
import { idempotencyKeyField, presentIdempotencyKey } from './idempotency-fields';
import { route } from '../http/route';
import { EnvVarSchema } from './code-resources';
import { defineSchema, nullableTimestamp, timestamp, uuid } from '../schemas/registry';
import { presentRunRetries, runRetryProperties } from './run-retries';
import { codeRunRecordRoutes, replayedFrom } from './code-run-records';

const TAG = 'Function runs';

export const FunctionRunSchema = defineSchema('FunctionRun', {
  type: 'object',
  required: [
    'function_run_id',
    'function_id',
    'status',
    'input',
    'runtime_path',
    'created_at',
    'created_by',
    'updated_at',
    'started_at',
    'completed_at',
  ],
  properties: {
    function_run_id: uuid,
    function_id: uuid,
    deployment_id: uuid,
    status: { type: 'string', enum: [...RUN_STATUSES] },
    status_detail: {
      description:
        'QUEUED while waiting for an execution slot of its organization: `{reason: "WaitingForExecutionSlot", message, executing, limit, ahead}`; SUCCEEDED/FAILED: `{reason: "Completed", message, exit_code}` (FAILED message: `<ErrorType>: <message>` of what the handler raised); ERROR: `{reason, error}`.',
    },
    input: { description: 'The event the handler received: `{body, query_params}`.' },
    runtime_path: {
      type: 'string',
      description: "Absolute path of the deployment's main file (whose handler runs) on the workers.",
    },
    env_vars: { type: 'array', items: EnvVarSchema },
    output: { description: "The handler's JSON result (SUCCEEDED runs)." },
    output_timestamp: { type: 'number', description: 'When the output was recorded (epoch seconds).' },
    created_by: { type: 'string' },
    replayed_from_run_id: replayedFrom,
    idempotency_key: idempotencyKeyField,
    ...runRetryProperties,
    created_at: timestamp,
    updated_at: timestamp,
    started_at: nullableTimestamp,
    completed_at: nullableTimestamp,
  },
});

const present = (r: Run, runtimePath: string) => ({
  function_run_id: r.run_id,
  function_id: r.resource_id,
  ...(r.deployment_id ? { deployment_id: r.deployment_id } : {}),
  status: r.status,
  ...(r.status_detail != null ? { status_detail: r.status_detail } : {}),
  input: r.input,
  runtime_path: runtimePath,
  env_vars: r.env_vars,
  ...(r.output_timestamp != null ? { output: r.output, output_timestamp: r.output_timestamp } : {}),
  created_by: r.created_by,
  ...(r.replayed_from_run_id ? { replayed_from_run_id: r.replayed_from_run_id } : {}),
  ...presentIdempotencyKey(r),
  ...presentRunRetries(r),
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
  started_at: iso(r.started_at),
  completed_at: iso(r.completed_at),
});

/** runtime_path needs the deployments' manifests: one query (and cached reads) per page, not per run. */
async function presentAll(ds: DataSource, runs: Run[]) {
  const paths = await runtimePathsOf(ds, runs);
  return runs.map((r) => present(r, paths.get(r.run_id) ?? ''));
}
export const presentFunctionRun = async (ds: DataSource, run: Run) => (await presentAll(ds, [run]))[0];

/** What executing a function answers for its run: the result, 202 with the run while open, else a 502. */
async function executionAnswer(ds: DataSource, run: Run) {
  if (run.status === 'SUCCEEDED') return { status: 200, body: run.output ?? null };
  if (run.status === 'QUEUED' || run.status === 'STARTING' || run.status === 'RUNNING') {
    return { status: 202, body: await presentFunctionRun(ds, run) };
  }
  const detail = (run.status_detail ?? {}) as { message?: string | null; error?: string };
  throw functionExecutionError(
    `Function run ${run.run_id} ended ${run.status}: ${detail.message ?? detail.error ?? 'no detail'}`,
  );
}

for (const method of ['get', 'post'] as const) {
  route({
    operationId: method === 'get' ? 'CreateFunctionExecutionGet' : 'CreateFunctionExecutionPost',
    needsDiskSpace: true,
    method,
    path: '/functions/{function_id}/execute',
    tag: TAG,
    summary:
      "Runs the handler (`run.handler`, default `handler`) of the function's latest successful deployment once " +
      'with the event `{body, query_params}`: `body` is the JSON request body (POST; an empty body is `{}`; GET: null), ' +
      "`query_params` the query string as strings (a repeated key keeps its last value). 200 with the handler's JSON " +
      'result. 502 FunctionExecutionError when the handler raised, could not be loaded or the run ended otherwise ' +
      '(the message names the function run, whose logs hold the traceback). 202 with the FunctionRun when it has not ' +
      "ended within FUNCTION_EXECUTE_TIMEOUT_SECONDS, or at once while the function's queue is paused (poll GET " +
      '/function-runs/{id}). 409 without a successful deployment.',
    params: { function_id: uuid },
    ...(method === 'post' ? { body: {} } : {}),
    responses: {
      200: { description: "The handler's result (any JSON)", schema: {} },
      202: { description: 'Still running: the run to poll', schema: FunctionRunSchema },
    },
    handler: async ({ ctx, deps, caller, params, body }) => {
      const input = {
        body: method === 'post' ? body : null,
        query_params: queryParamsOf(ctx.query as Record<string, string | string[]>),
      };
      return executionAnswer(deps.ds, await executeFunction(deps, caller, params.function_id, input));
    },
    // A repeat answers from the run as it is now (202 while it has not ended), without waiting.
    ...(method === 'post'
      ? {
          idempotent: async ({ deps, caller, record }) =>
            executionAnswer(deps.ds, await findRunOfKind(deps.ds, caller, 'function', record.id)),
        }
      : {}),
  });
}

codeRunRecordRoutes({
  kind: 'function',
  tag: TAG,
  schema: FunctionRunSchema,
  present: presentAll,
  summaries: {
    get: 'A function run.',
    logs: "The run's stdout and stderr lines (a handler's prints and tracebacks), in the order they were read.",
  },
});
