// The runs of every kind in one list, for the console's Runs page (docs/console.md), with its live counterpart
// (the organization's run changes over SSE) and the limits a run executes under. Each kind keeps its own
// routes for the full record, its events and its logs; this list says which kind and id to follow.
import { RUN_STATUSES, Run } from '../../persistence/entities/run';
import { iso } from '../../persistence/scoped';
import { LISTED_RUN_KINDS, pageAllRuns, runWorkflowId } from '../../services/code/runs/all-runs';
import { findInOrg } from '../../persistence/scoped';
import { limitsShown } from '../../services/code/runs/limits';
import { route } from '../http/route';
import { eventStreamResponse, resumeAfter } from '../sse/event-stream';
import { CHANGE_OVERLAP_MS, MAX_RESUME_MS, streamRunChanges } from '../sse/run-changes';
import { defineSchema, nullableTimestamp, pageOf, timestamp, uuid } from '../schemas/registry';

const RunSummarySchema = defineSchema('RunSummary', {
  type: 'object',
  required: ['run_id', 'kind', 'status', 'created_by', 'created_at', 'started_at', 'completed_at', 'workflow_id'],
  properties: {
    run_id: { ...uuid, description: "The id under the kind's own routes (`/<kind>-runs/{id}`)." },
    kind: { type: 'string', enum: [...LISTED_RUN_KINDS] },
    status: { type: 'string', enum: [...RUN_STATUSES] },
    status_detail: { description: 'As on the run of that kind.' },
    resource_id: { ...uuid, description: 'The structure, function or tool.' },
    assistant_id: uuid,
    deployment_id: uuid,
    created_by: { type: 'string', description: 'The user or API key that started the run.' },
    created_at: timestamp,
    started_at: nullableTimestamp,
    completed_at: nullableTimestamp,
    workflow_id: { type: 'string', description: "The run's workflow in Temporal." },
  },
});

const presentSummary = (r: Run) => ({
  run_id: r.run_id,
  kind: r.kind,
  status: r.status,
  ...(r.status_detail != null ? { status_detail: r.status_detail } : {}),
  ...(r.resource_id ? { resource_id: r.resource_id } : {}),
  ...(r.assistant_id ? { assistant_id: r.assistant_id } : {}),
  ...(r.deployment_id ? { deployment_id: r.deployment_id } : {}),
  created_by: r.created_by,
  created_at: iso(r.created_at),
  started_at: iso(r.started_at),
  completed_at: iso(r.completed_at),
  workflow_id: runWorkflowId(r),
});

route({
  operationId: 'ListRuns',
  method: 'get',
  path: '/runs',
  tag: 'Runs',
  paged: true,
  summary:
    'Runs of every kind (structure, function, tool, assistant, chat) of the organization, newest first. `kind` and ' +
    '`status` filter (`A,B` or repeated); `resource_id` is a structure, function, tool or assistant; `created_by` a ' +
    'user or API key id; [`created_after`, `created_before`) a window of creation.',
  query: {
    kind: { type: 'array', items: { type: 'string', enum: LISTED_RUN_KINDS } },
    status: { type: 'array', items: { type: 'string', enum: RUN_STATUSES } },
    resource_id: uuid,
    created_by: { type: 'string', maxLength: 200 },
    created_after: timestamp,
    created_before: timestamp,
  },
  responses: { 200: { description: 'Runs', schema: pageOf('RunList', 'runs', RunSummarySchema) } },
  handler: async ({ deps, caller, page, query }) => {
    const { items, pagination } = await pageAllRuns(
      deps.ds,
      caller,
      {
        kinds: query.kind,
        statuses: query.status,
        resourceId: query.resource_id,
        createdBy: query.created_by,
        createdAfter: query.created_after ? new Date(query.created_after) : undefined,
        createdBefore: query.created_before ? new Date(query.created_before) : undefined,
      },
      page,
    );
    return { status: 200, body: { runs: items.map(presentSummary), pagination } };
  },
});

route({
  operationId: 'GetRunChangesSSE',
  method: 'get',
  path: '/runs/stream',
  tag: 'Runs',
  summary:
    "Server-sent events: the organization's runs (of the kinds ListRuns lists) as they are created or change " +
    'status, one frame per change: `id: <microseconds since the epoch of the change>`, `data: <RunSummary>`. From ' +
    `now (the changes of the last ${CHANGE_OVERLAP_MS / 1000} s first), or after the \`Last-Event-ID\` header ` +
    `(or \`?last_event_id=\`; at most ${MAX_RESUME_MS / 3_600_000} h back, further is read as that). A frame is ` +
    'the run as it is now, so the same change may come twice (after a resume); ' +
    '`: keep-alive` comments every SSE_KEEPALIVE_MS. The stream does not end by itself; a response that ends ' +
    'means: resume with `Last-Event-ID`. An organization holds at most SSE_MAX_RUN_CHANGE_STREAMS_PER_ORG (50) of ' +
    'these open on one api process, within SSE_MAX_STREAMS_PER_ORG streams of every kind; past it 429 with Retry-After.',
  query: {
    last_event_id: {
      type: 'integer',
      minimum: 0,
      maximum: Number.MAX_SAFE_INTEGER,
      description: 'Resume after this change (the `id:` of a frame); the `Last-Event-ID` header wins.',
    },
  },
  responses: { 200: eventStreamResponse('Run changes', RunSummarySchema, 'open-ended') },
  handler: async ({ ctx, deps, caller, query }) => {
    const header = ctx.get('last-event-id').trim();
    await streamRunChanges(ctx, deps, {
      organizationId: caller.organizationId,
      afterUs:
        header !== '' || query.last_event_id !== undefined ? resumeAfter(ctx, query.last_event_id, 16) : undefined,
      kinds: LISTED_RUN_KINDS,
      present: presentSummary,
    });
  },
});

const optionalInteger = (description: string) => ({ type: 'integer', minimum: 0, description }) as const;

route({
  operationId: 'GetRunLimits',
  method: 'get',
  path: '/runs/{run_id}/limits',
  tag: 'Runs',
  summary:
    'The limits a run of any kind executes under: the platform settings named in each field (docs/configuration.md), ' +
    'as the worker that started the run recorded them (recorded: true), or, for a run not started yet (and runs ' +
    'started before limits were recorded), the settings it would run under today (recorded: false). A limit that ' +
    'does not apply to the run is absent: an assistant run or chat exchange runs no user code, and with ' +
    'SANDBOX=off only the memory limit of the sandbox holds.',
  params: { run_id: uuid },
  responses: {
    200: {
      description: 'Limits',
      schema: defineSchema('RunLimits', {
        type: 'object',
        required: ['run_id', 'kind', 'recorded', 'time_limit_seconds'],
        properties: {
          run_id: uuid,
          kind: { type: 'string', enum: [...LISTED_RUN_KINDS] },
          recorded: {
            type: 'boolean',
            description:
              "true: the limits recorded when the run started (its latest attempt); false: today's settings.",
          },
          time_limit_seconds: optionalInteger(
            'Wall time; past it the run ends ERROR (RUN_TIME_LIMIT_SECONDS; CHAT_MESSAGE_TIME_LIMIT_SECONDS for chat).',
          ),
          sandbox: { type: 'string', enum: ['on', 'off'], description: 'Isolation of user code (SANDBOX).' },
          isolation: {
            type: 'string',
            enum: ['root', 'rootless', 'off'],
            description:
              'Recorded only: how the worker isolated the run (docs/security.md: root, or the rootless mode).',
          },
          memory_mb: optionalInteger(
            'Memory of the whole run, every process (RUN_MEMORY_LIMIT_MB); see memory_scope for where it applied.',
          ),
          memory_scope: {
            type: 'string',
            enum: ['run', 'process'],
            description:
              "Recorded only: what memory_mb bounded: the run's control group (every process and its tmpfs), or " +
              "each process's address space (SANDBOX=off, or the rootless mode without a delegated cgroup v2).",
          },
          log_bytes: optionalInteger('stdout and stderr kept; past it the run ends ERROR (RUN_LOG_LIMIT_BYTES).'),
          result_bytes: optionalInteger("A function's or tool's result (RUN_RESULT_LIMIT_BYTES)."),
          max_processes: optionalInteger('Processes and threads (SANDBOX_MAX_PROCESSES).'),
          cpu_seconds: optionalInteger('CPU seconds per process (SANDBOX_CPU_SECONDS).'),
          max_open_files: optionalInteger('Open files per process (SANDBOX_MAX_OPEN_FILES).'),
          max_run_open_files: optionalInteger(
            'Open files of the whole run across its processes (SANDBOX_MAX_RUN_OPEN_FILES; its group is watched).',
          ),
          file_mb: optionalInteger('Largest file written (SANDBOX_FILE_MB).'),
          disk_mb: optionalInteger('Size of the private HOME and of /tmp, each (SANDBOX_DISK_MB).'),
          shm_mb: optionalInteger('Size of /dev/shm, counted in the memory (SANDBOX_SHM_MB).'),
        },
      }),
    },
  },
  handler: async ({ deps, caller, params }) => {
    const run = await findInOrg(deps.ds, Run, caller.organizationId, { run_id: params.run_id }, 'Run');
    return { status: 200, body: { run_id: run.run_id, kind: run.kind, ...limitsShown(deps.config, run) } };
  },
});
