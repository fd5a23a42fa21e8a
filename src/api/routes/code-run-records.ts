// The record routes every kind of code run (structure, function, tool) has: the runs of one resource (paged,
// newest first, `status` filter), one run, and its log lines. The kinds differ only in their shape (`present`).
import type { DataSource } from 'typeorm';
import type { CodeResourceKind } from '../../persistence/entities/code-resource';
import { RUN_STATUSES, Run } from '../../persistence/entities/run';
import { findRunOfKind, listRunsOfKind, runLogsOfKind } from '../../services/code/runs/code-runs';
import { route } from '../http/route';
import { defineSchema, JsonSchema, pageOf, uuid } from '../schemas/registry';

/** `{logs: string[]}` of structure, function and tool runs. */
export const RunLogsSchema = defineSchema('RunLogs', {
  type: 'object',
  required: ['logs'],
  properties: { logs: { type: 'array', items: { type: 'string' } } },
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
