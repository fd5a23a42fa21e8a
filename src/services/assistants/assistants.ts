// Assistants: a name, optional default input, and the ids of what its runs use (rulesets as instructions,
// structures and tools offered to the model, knowledge bases and retrievers). Every id must name a record
// of the caller's organization when it is set.
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { DataSource } from 'typeorm';
import type { Caller } from '../caller';
import type { PageRequest } from '../../persistence/pagination';
import { Assistant, ASSISTANT_ID_LISTS, AssistantResourceIds } from '../../persistence/entities/assistant';
import { assertIdsInOrg, findInOrg, pageInOrg } from '../../persistence/scoped';
import { OPEN_RUN_STATUSES, stopOpenRuns } from '../code/runs/cancellation';
import { deleteSchedulesOf } from '../schedules/removal';
import type { Concurrency } from '../../persistence/entities/code-resource';
import type { RetryPolicyRequest } from '../../temporal/retry-policy';
import { requestedPolicy } from '../code/runs/retries';

export interface AssistantFields extends Partial<AssistantResourceIds> {
  name?: string;
  description?: string;
  input?: string | null;
  /** null: no limit of its own (docs/run-control.md#concurrency-keys-and-limits). */
  concurrency?: Concurrency | null;
  /** null: its runs are never retried (docs/run-control.md#retries-of-lost-runs). */
  retry_policy?: RetryPolicyRequest | null;
}

/** Checks the id lists of a request: rulesets, structures, tools, knowledge bases and retrievers of the organization (409 naming the missing ones). */
export async function assertAssistantIds(
  ds: DataSource,
  organizationId: string,
  ids: Partial<AssistantResourceIds>,
  pathPrefix = '/body/',
): Promise<void> {
  await assertIdsInOrg(ds, 'ruleset', organizationId, ids.ruleset_ids ?? [], `${pathPrefix}ruleset_ids`);
  await assertIdsInOrg(ds, 'structure', organizationId, ids.structure_ids ?? [], `${pathPrefix}structure_ids`);
  await assertIdsInOrg(ds, 'tool', organizationId, ids.tool_ids ?? [], `${pathPrefix}tool_ids`);
  await assertIdsInOrg(
    ds,
    'knowledge_base',
    organizationId,
    ids.knowledge_base_ids ?? [],
    `${pathPrefix}knowledge_base_ids`,
  );
  await assertIdsInOrg(ds, 'retriever', organizationId, ids.retriever_ids ?? [], `${pathPrefix}retriever_ids`);
}

export const findAssistant = (ds: DataSource, caller: Caller, id: string) =>
  findInOrg(ds, Assistant, caller.organizationId, { assistant_id: id }, 'Assistant');

export const listAssistants = (ds: DataSource, caller: Caller, page: PageRequest) =>
  pageInOrg(ds, Assistant, caller.organizationId, page, {}, { created_at: 'DESC', assistant_id: 'DESC' });

const dedupe = (ids: string[]) => [...new Set(ids)];

export async function createAssistant(
  ds: DataSource,
  caller: Caller,
  fields: AssistantFields & { name: string },
): Promise<Assistant> {
  await assertAssistantIds(ds, caller.organizationId, fields);
  const now = new Date();
  const assistant: Assistant = {
    assistant_id: randomUUID(),
    organization_id: caller.organizationId,
    name: fields.name,
    description: fields.description ?? '',
    input: fields.input ?? null,
    knowledge_base_ids: dedupe(fields.knowledge_base_ids ?? []),
    retriever_ids: dedupe(fields.retriever_ids ?? []),
    ruleset_ids: dedupe(fields.ruleset_ids ?? []),
    structure_ids: dedupe(fields.structure_ids ?? []),
    tool_ids: dedupe(fields.tool_ids ?? []),
    concurrency: fields.concurrency ?? null,
    queue_paused_at: null,
    retry_policy: fields.retry_policy ? requestedPolicy(fields.retry_policy, '/body/retry_policy') : null,
    created_by: caller.actor,
    created_at: now,
    updated_at: now,
  };
  return ds.getRepository(Assistant).save(assistant);
}

/** Changes the given fields; a given id list replaces the stored one. */
export async function updateAssistant(
  ds: DataSource,
  caller: Caller,
  id: string,
  fields: AssistantFields,
): Promise<Assistant> {
  const assistant = await findAssistant(ds, caller, id);
  await assertAssistantIds(ds, caller.organizationId, fields);
  if (fields.name !== undefined) assistant.name = fields.name;
  if (fields.description !== undefined) assistant.description = fields.description;
  if (fields.input !== undefined) assistant.input = fields.input;
  if (fields.concurrency !== undefined) assistant.concurrency = fields.concurrency;
  if (fields.retry_policy !== undefined)
    assistant.retry_policy = requestedPolicy(fields.retry_policy, '/body/retry_policy');
  for (const list of ASSISTANT_ID_LISTS) {
    const given = fields[list];
    if (given !== undefined) assistant[list] = dedupe(given);
  }
  assistant.updated_at = new Date();
  return ds.getRepository(Assistant).save(assistant);
}

/** Deletes the assistant with its runs (cascade); open runs are cancelled first (bounded wait). */
export async function deleteAssistant(
  deps: { ds: DataSource; temporal: Client },
  caller: Caller,
  id: string,
): Promise<void> {
  const assistant = await findAssistant(deps.ds, caller, id);
  const open = await deps.ds.query(`SELECT run_id, kind FROM runs WHERE assistant_id = $1 AND status = ANY($2)`, [
    assistant.assistant_id,
    OPEN_RUN_STATUSES,
  ]);
  await stopOpenRuns(deps, caller, open);
  await deleteSchedulesOf(deps, assistant.assistant_id);
  await deps.ds.getRepository(Assistant).delete({ assistant_id: assistant.assistant_id });
}
