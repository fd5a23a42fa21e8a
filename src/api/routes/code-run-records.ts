// The record routes every kind of code run (structure, function, tool) has: the runs of one resource (paged,
// newest first, `status` filter), one run, its log lines, and replay (one finished run, or those of a resource
// a filter selects: docs/run-control.md#replay). The kinds differ only in their shape (`present`).
import type { DataSource } from 'typeorm';
import type { CodeResourceKind } from '../../persistence/entities/code-resource';
import { RUN_STATUSES, RUN_TERMINAL, Run } from '../../persistence/entities/run';
import { findRunOfKind, listRunsOfKind, runLogsOfKind } from '../../services/code/runs/code-runs';
import { MAX_BULK_REPLAY, replayCodeRun, replayCodeRuns } from '../../services/code/runs/replay';
import { route } from '../http/route';
import { defineSchema, JsonSchema, pageOf, timestamp, uuid } from '../schemas/registry';
import { EnvVarSchema } from './code-resources';

/** `{logs: string[]}` of structure, function and tool runs. */
export const RunLogsSchema = defineSchema('RunLogs', {
  type: 'object',
  required: ['logs'],
  properties: { logs: { type: 'array', items: { type: 'string' } } },
});

/** A run's `replayed_from_run_id`: in the shape of every kind of run. */
export const replayedFrom: JsonSchema = {
  ...uuid,
  description: 'The finished run this run replays (POST /{kind}-runs/{id}/replay); absent for other runs.',
};

const ReplayRunRequest = defineSchema('ReplayRunRequest', {
  type: 'object',
  properties: {
    args: {
      type: 'array',
      items: { type: 'string' },
      maxItems: 1000,
      description: "Instead of the run's args (structure runs).",
    },
    env_vars: {
      type: 'array',
      items: EnvVarSchema,
      maxItems: 500,
      description: "Instead of the run's own env vars (the resource's still come first).",
    },
    deployment_id: { ...uuid, description: "A SUCCEEDED deployment of the run's resource instead of its latest." },
  },
});

const ReplayRunsRequest = defineSchema('ReplayRunsRequest', {
  type: 'object',
  properties: {
    status: {
      type: 'array',
      items: { type: 'string', enum: [...RUN_TERMINAL] },
      maxItems: RUN_TERMINAL.length,
      description: 'Finished statuses to replay; default FAILED and ERROR.',
    },
    created_after: { ...timestamp, description: 'Runs created at or after this time.' },
    created_before: { ...timestamp, description: 'Runs created before this time.' },
    limit: {
      type: 'integer',
      minimum: 1,
      maximum: MAX_BULK_REPLAY,
      description: `At most this many runs, oldest first (default and maximum ${MAX_BULK_REPLAY}).`,
    },
    deployment_id: { ...uuid, description: 'A SUCCEEDED deployment of the resource instead of its latest.' },
  },
});

export function codeRunRecordRoutes(o: {
  kind: CodeResourceKind;
  tag: string;
  schema: JsonSchema;
  present: (ds: DataSource, runs: Run[]) => Promise<unknown[]> | unknown[];
  summaries: { get: string; logs: string };
}): void {
  const label = o.kind[0].toUpperCase() + o.kind.slice(1);
  const resourceId = `${o.kind}_id`;
  const runId = `${o.kind}_run_id`;
  const listKey = `${o.kind}_runs`;

  route({
    operationId: `List${label}Runs`,
    method: 'get',
    path: `/${o.kind}s/{${resourceId}}/runs`,
    tag: o.tag,
    paged: true,
    summary: `Runs of a ${o.kind}, newest first; \`status\` filters (\`status=A,B\` or repeated).`,
    params: { [resourceId]: uuid },
    query: { status: { type: 'array', items: { type: 'string', enum: [...RUN_STATUSES] } } },
    responses: { 200: { description: 'Runs', schema: pageOf(`${label}RunList`, listKey, o.schema) } },
    handler: async ({ deps, caller, params, page, query }) => {
      const { items, pagination } = await listRunsOfKind(
        deps.ds,
        caller,
        o.kind,
        params[resourceId],
        page,
        query.status,
      );
      return { status: 200, body: { [listKey]: await o.present(deps.ds, items), pagination } };
    },
  });

  route({
    operationId: `Get${label}Run`,
    method: 'get',
    path: `/${o.kind}-runs/{${runId}}`,
    tag: o.tag,
    runScoped: true,
    summary: o.summaries.get,
    params: { [runId]: uuid },
    responses: { 200: { description: 'Run', schema: o.schema } },
    handler: async ({ deps, caller, params }) => ({
      status: 200,
      body: (await o.present(deps.ds, [await findRunOfKind(deps.ds, caller, o.kind, params[runId])]))[0],
    }),
  });

  route({
    operationId: `Replay${label}Run`,
    needsDiskSpace: true,
    method: 'post',
    path: `/${o.kind}-runs/{${runId}}/replay`,
    tag: o.tag,
    summary:
      `Runs a finished ${o.kind} run again as a new run: the same args, input and run env vars (args, env vars and ` +
      `the deployment may be overridden), on the ${o.kind}'s latest successful deployment; the new run's ` +
      '`replayed_from_run_id` names this one. 409 while the run is queued or running, or without a successful deployment.',
    params: { [runId]: uuid },
    body: ReplayRunRequest,
    responses: { 201: { description: 'The new run, QUEUED', schema: o.schema } },
    handler: async ({ deps, caller, params, body }) => {
      const run = await replayCodeRun(deps, caller, o.kind, params[runId], body);
      return { status: 201, body: (await o.present(deps.ds, [run]))[0] };
    },
    idempotent: async ({ deps, caller, record }) => ({
      status: 200,
      body: (await o.present(deps.ds, [await findRunOfKind(deps.ds, caller, o.kind, record.id)]))[0],
    }),
  });

  route({
    operationId: `Replay${label}Runs`,
    needsDiskSpace: true,
    method: 'post',
    path: `/${o.kind}s/{${resourceId}}/runs/replay`,
    tag: o.tag,
    summary:
      `Replays the finished runs of a ${o.kind} that the filter selects (default: FAILED and ERROR), oldest first, at ` +
      `most ${MAX_BULK_REPLAY}: each becomes a new run as with Replay${label}Run. Answers the new runs.`,
    params: { [resourceId]: uuid },
    body: ReplayRunsRequest,
    responses: {
      201: {
        description: 'The new runs, QUEUED',
        schema: defineSchema(`${label}RunReplays`, {
          type: 'object',
          required: [listKey],
          properties: { [listKey]: { type: 'array', items: o.schema } },
        }),
      },
    },
    handler: async ({ deps, caller, params, body }) => {
      const runs = await replayCodeRuns(deps, caller, o.kind, params[resourceId], body);
      return { status: 201, body: { [listKey]: await o.present(deps.ds, runs) } };
    },
  });

  route({
    operationId: `List${label}RunLogs`,
    method: 'get',
    path: `/${o.kind}-runs/{${runId}}/logs`,
    tag: o.tag,
    summary: o.summaries.logs,
    params: { [runId]: uuid },
    responses: { 200: { description: 'Log lines', schema: RunLogsSchema } },
    handler: async ({ deps, caller, params }) => ({
      status: 200,
      body: { logs: await runLogsOfKind(deps.ds, caller, o.kind, params[runId]) },
    }),
  });
}
