// The runs of every kind in one list, for the console's Runs page (docs/console.md). Each kind keeps its own
// routes for the full record, its events and its logs; this list says which kind and id to follow.
import { RUN_STATUSES, Run } from '../../persistence/entities/run';
import { iso } from '../../persistence/scoped';
import { LISTED_RUN_KINDS, pageAllRuns, runWorkflowId } from '../../services/code/runs/all-runs';
import { route } from '../http/route';
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
