// The child runs of an assistant run: a tool's `{describe: true}` run (once per deployment of the tool, its
// description cached as that run's output), and the structure or tool run of a function call the model made.
// Planning one inserts its run row (idempotent: the id comes from the workflow, which then starts it) or says
// why there is none; a knowledge base or retriever call needs none (./retrieval-calls.ts answers it).
import type { DataSource } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import type { AssistantToolDefinition } from '../../persistence/entities/assistant';
import { CodeResource } from '../../persistence/entities/code-resource';
import { Run } from '../../persistence/entities/run';
import type { ResourceKind } from '../../temporal/workflow-start';
import { latestSuccessfulDeployment } from '../code/deployments';
import { queuedCodeRun } from '../code/runs/begin';
import { appendEvents } from '../code/runs/state';
import type { DescribedTool } from './prompt';
import { loadAssistantRun, toolCallOf } from './transcript';
import type { ChildRun } from '../../temporal/contracts';

export type { ChildRun };

/** `retrieval`: the call is a knowledge base or retriever function, run by runAssistantRetrieval (no child run). */
export type ChildRunPlan = ChildRun | { error: string } | { retrieval: true };

/** `arguments`: an approver's, run instead of the model's (docs/waitpoints.md). */
export type ChildRunPurpose =
  { describe: string } | { toolCall: { step: number; toolCallId: string; arguments?: Record<string, unknown> } };

/** The newest successful `{describe: true}` run of the tool's current deployment: descriptions are cached per deployment. */
export async function cachedDescription(ds: DataSource, tool: CodeResource): Promise<DescribedTool | undefined> {
  const deployment = await latestSuccessfulDeployment(ds, tool.resource_id);
  if (!deployment) return undefined;
  const [row]: Array<{ output: { name?: string; activities?: DescribedTool['activities'] } }> = await ds.query(
    `SELECT output FROM runs WHERE resource_id = $1 AND deployment_id = $2 AND kind = 'tool' AND status = 'SUCCEEDED'
       AND input = '{"describe": true}'::jsonb ORDER BY completed_at DESC LIMIT 1`,
    [tool.resource_id, deployment.deployment_id],
  );
  if (!row?.output?.activities) return undefined;
  return {
    toolId: tool.resource_id,
    name: row.output.name ?? tool.name,
    activities: row.output.activities,
    ...(tool.requires_approval
      ? {
          approval: {
            timeoutSeconds: tool.approval_timeout_seconds,
            ...(tool.approval_webhook ? { notify: true as const } : {}),
          },
        }
      : {}),
  };
}

/** The run's tools that have no cached description yet (each needs a describe run); undefined when the run is gone. */
export async function toolsToDescribe(ds: DataSource, runId: string): Promise<string[] | undefined> {
  const loaded = await loadAssistantRun(ds, runId);
  if (!loaded) return undefined;
  const missing: string[] = [];
  for (const toolId of loaded.details.tool_ids) {
    const tool = await ds.getRepository(CodeResource).findOneBy({ resource_id: toolId, kind: 'tool' });
    if (tool && !(await cachedDescription(ds, tool))) missing.push(toolId);
  }
  return missing;
}

/**
 * Inserts the row of a child run (idempotent: the id comes from the workflow) — a tool's describe run,
 * or the structure or tool run of a function call the model made — or says why there is none.
 */
export async function planChildRun(
  ds: DataSource,
  input: { runId: string; childRunId: string; purpose: ChildRunPurpose },
): Promise<ChildRunPlan> {
  const loaded = await loadAssistantRun(ds, input.runId);
  if (!loaded) return { error: 'The assistant run no longer exists' };
  const { run, details } = loaded;
  let target: Extract<AssistantToolDefinition['target'], { kind: 'structure' | 'tool' }>;
  let args: string[] = [];
  let childInput: unknown = null;
  let call: { id: string; name: string } | undefined;
  if ('describe' in input.purpose) {
    target = { kind: 'tool', id: input.purpose.describe, activity: '' };
    childInput = { describe: true };
  } else {
    const { step, toolCallId, arguments: approved } = input.purpose.toolCall;
    const toolCall = toolCallOf(details, step, toolCallId);
    if (!toolCall) return { error: `Unknown function call ${toolCallId}` };
    call = toolCall;
    const definition = details.tool_definitions?.find((d) => d.name === toolCall.name);
    if (!definition) return { error: `There is no function named "${toolCall.name}"` };
    let parsed: unknown = approved;
    try {
      parsed ??= toolCall.arguments.trim() === '' ? {} : JSON.parse(toolCall.arguments);
    } catch {
      return { error: `The arguments of ${toolCall.name} are not valid JSON: ${toolCall.arguments.slice(0, 200)}` };
    }
    if (definition.target.kind === 'knowledge_base' || definition.target.kind === 'retriever')
      return { retrieval: true };
    target = definition.target;
    if (target.kind === 'structure') {
      const given = (parsed as { args?: unknown } | null)?.args ?? [];
      if (!Array.isArray(given) || !given.every((a) => typeof a === 'string'))
        return { error: '`args` must be an array of strings' };
      args = given;
    } else {
      childInput = { activity: target.activity, params: parsed ?? {} };
    }
  }
  const resource = await ds
    .getRepository(CodeResource)
    .findOneBy({ resource_id: target.id, organization_id: run.organization_id });
  if (!resource) return { error: `The ${target.kind} ${target.id} no longer exists` };
  const row = await queuedCodeRun(ds, resource, {
    runId: input.childRunId,
    organizationId: run.organization_id,
    createdBy: run.created_by,
    args,
    envVars: [],
    input: childInput,
    retryPolicy: null, // the assistant's own run decides what a failed tool call means
  });
  if (!row) return { error: `The ${resource.kind} "${resource.name}" has no successful deployment` };
  await ds.transaction(async (em) => {
    const inserted = await em
      .createQueryBuilder()
      .insert()
      .into(Run)
      .values(row as QueryDeepPartialEntity<Run>)
      .orIgnore()
      .execute();
    if (call && inserted.identifiers.length) {
      await appendEvents(em, run.run_id, [
        {
          type: 'AssistantToolCallStarted',
          origin: 'SYSTEM',
          payload: {
            tool_call_id: call.id,
            name: call.name,
            kind: resource.kind,
            [`${resource.kind}_id`]: resource.resource_id,
            run_id: input.childRunId,
          },
        },
      ]);
    }
  });
  return {
    childRunId: input.childRunId,
    workflowKind: `${resource.kind}-run` as ResourceKind,
    organizationId: run.organization_id,
    summary: `${call ? `Call ${call.name}` : `Describe tool ${resource.name}`} for assistant run ${run.run_id}`,
  };
}
