// Tool runs: the runtime endpoints GriptapeCloudToolTool uses (the tool's OpenAPI document, running one
// activity) and the runs' list, record and logs. A call that did not produce a result answers 200 with
// `{error, tool_run_id}`: the framework raises on non-2xx before reading the body, and treats a body with
// both keys as a failure (openapi) or shows it to the model as text (activities).
import { RUN_STATUSES, Run } from '../../persistence/entities/run';
import { iso } from '../../persistence/scoped';
import type { DataSource } from 'typeorm';
import { runtimePathsOf } from '../../services/runs/function-runs';
import { findRunOfKind, listRunsOfKind, runLogsOfKind } from '../../services/runs/code-runs';
import { describeTool, runToolActivity, ToolCallResult, ToolDescription, toolOpenApi } from '../../services/runs/tool-runs';
import { route } from '../http/route';
import { defineSchema, nullableTimestamp, pageOf, timestamp, uuid } from '../schemas/registry';
import { RunLogsSchema } from './runs';

const TAG = 'Tool runs';

export const ToolRunSchema = defineSchema('ToolRun', {
  type: 'object',
  required: ['tool_run_id', 'tool_id', 'status', 'input', 'runtime_path', 'created_at', 'created_by', 'updated_at', 'started_at', 'completed_at'],
  properties: {
    tool_run_id: uuid, tool_id: uuid, deployment_id: uuid,
    status: { type: 'string', enum: [...RUN_STATUSES] },
    status_detail: { description: 'SUCCEEDED/FAILED: `{reason: "Completed", message, exit_code}` (FAILED message: `<ErrorType>: <message>`); ERROR: `{reason, error}`.' },
    input: { description: '`{activity, params}` (an activity call) or `{describe: true}` (the OpenAPI document).' },
    runtime_path: { type: 'string', description: 'Absolute path of the deployment\'s tool file on the workers.' },
    output: { description: 'The artifact dict (activity) or `{name, activities}` (describe) of SUCCEEDED runs.' },
    created_by: { type: 'string' }, created_at: timestamp, updated_at: timestamp,
    started_at: nullableTimestamp, completed_at: nullableTimestamp,
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
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
  started_at: iso(r.started_at),
  completed_at: iso(r.completed_at),
});

async function presentAll(ds: DataSource, runs: Run[]) {
  const paths = await runtimePathsOf(ds, runs);
  return runs.map((r) => present(r, paths.get(r.run_id) ?? ''));
}

const failure = (r: Extract<ToolCallResult, { ok: false }>) => ({ status: 200, body: { error: r.error, tool_run_id: r.run.run_id } });
const ToolCallError = defineSchema('ToolCallError', {
  type: 'object', required: ['error', 'tool_run_id'], properties: { error: { type: 'string' }, tool_run_id: uuid },
});

route({
  operationId: 'GetToolOpenApi', method: 'get', path: '/tools/{tool_id}/openapi', tag: TAG,
  summary: 'Describes the tool (a tool run of its latest successful deployment, input `{describe: true}`) as an OpenAPI 3.1 '
    + 'document: `info.title` is the tool\'s name, each activity a `POST /activities/{name}` (operationId = name, its '
    + 'description, the request body schema = the activity\'s schema). 200 `{error, tool_run_id}` when the run did not '
    + 'succeed (its logs hold the traceback). 409 without a successful deployment.',
  params: { tool_id: uuid },
  responses: { 200: { description: 'OpenAPI document, or `{error, tool_run_id}`', schema: {} } },
  handler: async ({ deps, caller, params }) => {
    const r = await describeTool(deps, caller, params.tool_id);
    if (!r.ok) return failure(r);
    return { status: 200, body: toolOpenApi(r.output as ToolDescription, params.tool_id) };
  },
});

route({
  operationId: 'RunToolActivity', method: 'post', path: '/tools/{tool_id}/activities/{activity_name}', tag: TAG,
  summary: 'Runs one activity of the tool\'s latest successful deployment with the JSON body as its params (griptape '
    + 'tools receive `{"values": body}`) and answers 200 with the artifact dict (`{"type": "TextArtifact", "value": ...}`). '
    + '200 `{error, tool_run_id}` when the activity raised or the run did not end within FUNCTION_EXECUTE_TIMEOUT_SECONDS. '
    + '404 when the tool has no such activity; 409 without a successful deployment.',
  params: { tool_id: uuid, activity_name: { type: 'string', minLength: 1, maxLength: 200 } },
  body: {},
  responses: { 200: { description: 'The artifact, or `{error, tool_run_id}`', schema: { anyOf: [ToolCallError, { type: 'object' }] } } },
  handler: async ({ deps, caller, params, body }) => {
    const r = await runToolActivity(deps, caller, params.tool_id, params.activity_name, body);
    return r.ok ? { status: 200, body: r.output ?? null } : failure(r);
  },
});

route({
  operationId: 'ListToolRuns', method: 'get', path: '/tools/{tool_id}/runs', tag: TAG, paged: true,
  summary: 'Runs of a tool, newest first; `status` filters (`status=A,B` or repeated).',
  params: { tool_id: uuid },
  query: { status: { type: 'array', items: { type: 'string', enum: [...RUN_STATUSES] } } },
  responses: { 200: { description: 'Runs', schema: pageOf('ToolRunList', 'tool_runs', ToolRunSchema) } },
  handler: async ({ deps, caller, params, page, query }) => {
    const { items, pagination } = await listRunsOfKind(deps.ds, caller, 'tool', params.tool_id, page, query.status);
    return { status: 200, body: { tool_runs: await presentAll(deps.ds, items), pagination } };
  },
});

const runPath = { tool_run_id: uuid };

route({
  operationId: 'GetToolRun', method: 'get', path: '/tool-runs/{tool_run_id}', tag: TAG, runScoped: true,
  summary: 'A tool run.', params: runPath,
  responses: { 200: { description: 'Run', schema: ToolRunSchema } },
  handler: async ({ deps, caller, params }) => ({
    status: 200, body: (await presentAll(deps.ds, [await findRunOfKind(deps.ds, caller, 'tool', params.tool_run_id)]))[0],
  }),
});

route({
  operationId: 'ListToolRunLogs', method: 'get', path: '/tool-runs/{tool_run_id}/logs', tag: TAG,
  summary: 'The run\'s stdout and stderr lines (an activity\'s prints and tracebacks), in the order they were read.',
  params: runPath,
  responses: {
    200: {
      description: 'Log lines',
      schema: RunLogsSchema,
    },
  },
  handler: async ({ deps, caller, params }) => ({
    status: 200, body: { logs: await runLogsOfKind(deps.ds, caller, 'tool', params.tool_run_id) },
  }),
});
