// Tool runs: the runtime endpoints GriptapeCloudToolTool uses (the tool's OpenAPI document, running one
// activity) and the runs' list, record and logs. A call that did not produce a result answers 200 with
// `{error, tool_run_id}`: the framework raises on non-2xx before reading the body, and treats a body with
// both keys as a failure (openapi) or shows it to the model as text (activities).
import { RUN_STATUSES, Run } from '../../persistence/entities/run';
import { iso } from '../../persistence/scoped';
import type { DataSource } from 'typeorm';
import { runtimePathsOf } from '../../services/code/runs/function-runs';
import { findRunOfKind } from '../../services/code/runs/code-runs';
import {
  describeTool,
  resultOf,
  runToolActivity,
  ToolCallResult,
  ToolDescription,
  toolOpenApi,
} from '../../services/code/runs/tool-runs';
import { idempotencyKeyField, presentIdempotencyKey } from './idempotency-fields';
import { route } from '../http/route';
import { defineSchema, nullableTimestamp, timestamp, uuid } from '../schemas/registry';
import { presentRunRetries, runRetryProperties } from './run-retries';
import { codeRunRecordRoutes, replayedFrom } from './code-run-records';

const TAG = 'Tool runs';

export const ToolRunSchema = defineSchema('ToolRun', {
  type: 'object',
  required: [
    'tool_run_id',
    'tool_id',
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
    tool_run_id: uuid,
    tool_id: uuid,
    deployment_id: uuid,
    status: { type: 'string', enum: [...RUN_STATUSES] },
    status_detail: {
      description:
        'QUEUED while waiting for an execution slot of its organization: `{reason: "WaitingForExecutionSlot", message, executing, limit, ahead}`; SUCCEEDED/FAILED: `{reason: "Completed", message, exit_code}` (FAILED message: `<ErrorType>: <message>`); ERROR: `{reason, error}`.',
    },
    input: { description: '`{activity, params}` (an activity call) or `{describe: true}` (the OpenAPI document).' },
    runtime_path: { type: 'string', description: "Absolute path of the deployment's tool file on the workers." },
    output: { description: 'The artifact dict (activity) or `{name, activities}` (describe) of SUCCEEDED runs.' },
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
  tool_run_id: r.run_id,
  tool_id: r.resource_id,
  ...(r.deployment_id ? { deployment_id: r.deployment_id } : {}),
  status: r.status,
  ...(r.status_detail != null ? { status_detail: r.status_detail } : {}),
  input: r.input,
  runtime_path: runtimePath,
  ...(r.output_timestamp != null ? { output: r.output } : {}),
  created_by: r.created_by,
  ...(r.replayed_from_run_id ? { replayed_from_run_id: r.replayed_from_run_id } : {}),
  ...presentIdempotencyKey(r),
  ...presentRunRetries(r),
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
  started_at: iso(r.started_at),
  completed_at: iso(r.completed_at),
});

async function presentAll(ds: DataSource, runs: Run[]) {
  const paths = await runtimePathsOf(ds, runs);
  return runs.map((r) => present(r, paths.get(r.run_id) ?? ''));
}

const failure = (r: Extract<ToolCallResult, { ok: false }>) => ({
  status: 200,
  body: { error: r.error, tool_run_id: r.run.run_id },
});
const ToolCallError = defineSchema('ToolCallError', {
  type: 'object',
  required: ['error', 'tool_run_id'],
  properties: { error: { type: 'string' }, tool_run_id: uuid },
});

route({
  operationId: 'GetToolOpenApi',
  method: 'get',
  path: '/tools/{tool_id}/openapi',
  tag: TAG,
  summary:
    'Describes the tool (a tool run of its latest successful deployment, input `{describe: true}`) as an OpenAPI 3.1 ' +
    "document: `info.title` is the tool's name, each activity a `POST /activities/{name}` (operationId = name, its " +
    "description, the request body schema = the activity's schema). 200 `{error, tool_run_id}` when the run did not " +
    'succeed (its logs hold the traceback). 409 without a successful deployment.',
  params: { tool_id: uuid },
  responses: { 200: { description: 'OpenAPI document, or `{error, tool_run_id}`', schema: {} } },
  handler: async ({ deps, caller, params }) => {
    const r = await describeTool(deps, caller, params.tool_id);
    if (!r.ok) return failure(r);
    return { status: 200, body: toolOpenApi(r.output as ToolDescription, params.tool_id) };
  },
});

route({
  operationId: 'RunToolActivity',
  needsDiskSpace: true,
  method: 'post',
  path: '/tools/{tool_id}/activities/{activity_name}',
  tag: TAG,
  summary:
    "Runs one activity of the tool's latest successful deployment with the JSON body as its params (griptape " +
    'tools receive `{"values": body}`) and answers 200 with the artifact dict (`{"type": "TextArtifact", "value": ...}`). ' +
    '200 `{error, tool_run_id}` when the activity raised or the run did not end within FUNCTION_EXECUTE_TIMEOUT_SECONDS. ' +
    '404 when the tool has no such activity; 409 without a successful deployment.',
  params: { tool_id: uuid, activity_name: { type: 'string', minLength: 1, maxLength: 200 } },
  body: {},
  responses: {
    200: {
      description: 'The artifact, or `{error, tool_run_id}`',
      schema: { anyOf: [ToolCallError, { type: 'object' }] },
    },
  },
  handler: async ({ deps, caller, params, body }) => {
    const r = await runToolActivity(deps, caller, params.tool_id, params.activity_name, body);
    return r.ok ? { status: 200, body: r.output ?? null } : failure(r);
  },
  idempotent: async ({ deps, caller, record }) => {
    const r = resultOf(await findRunOfKind(deps.ds, caller, 'tool', record.id));
    return r.ok ? { status: 200, body: r.output ?? null } : failure(r);
  },
});

codeRunRecordRoutes({
  kind: 'tool',
  tag: TAG,
  schema: ToolRunSchema,
  present: presentAll,
  summaries: {
    get: 'A tool run.',
    logs: "The run's stdout and stderr lines (an activity's prints and tracebacks), in the order they were read.",
  },
});
