// Searching a knowledge base: the worker retrieves the chunks as a query does, the default model answers
// from them citing [n] (retrieve.ts), and the search is persisted; the api waits for workflow
// `knowledge-base-search-<uuid>` and answers the row. Without a default model the api refuses at once (503
// naming DEFAULT_MODEL) rather than starting a workflow that cannot answer.
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { DataSource } from 'typeorm';
import type { ModelDriver } from '../../../drivers/model/types';
import type { Caller } from '../../caller';
import type { Config } from '../../../config';
import { notFound, serviceUnavailable } from '../../../errors';
import { KnowledgeBase } from '../../../persistence/entities/knowledge-base';
import { KnowledgeBaseSearch } from '../../../persistence/entities/retrieval';
import type { PageRequest } from '../../../persistence/pagination';
import { findInOrg, pageInOrg } from '../../../persistence/scoped';
import { workflowStart, type KnowledgeBaseQueryArgs, type KnowledgeBaseSearchInput } from '../../../temporal/contracts';
import { findKnowledgeBase } from '../knowledge-bases';
import { answerFrom, retrieve, type RetrievalStores } from './retrieve';
import { awaitRetrieval, queryArgsOf } from './run-query';

/** 503 unless a default model is configured: searches, reranking and retrieval answers need one. */
export function assertDefaultModel(config: Config, what: string): void {
  if (!config.models.defaultModel) {
    throw serviceUnavailable(
      `${what} needs a model and none is configured: set DEFAULT_MODEL (provider/model, e.g. openai/gpt-4.1-mini) ` +
        'and its provider (OPENAI_API_KEY or MODEL_PROVIDERS); see docs/configuration.md',
    );
  }
}

export async function searchKnowledgeBase(
  deps: { ds: DataSource; temporal: Client; config: Config },
  caller: Caller,
  knowledgeBaseId: string,
  body: { query: string; query_args?: Partial<KnowledgeBaseQueryArgs> },
): Promise<KnowledgeBaseSearch> {
  const kb = await findKnowledgeBase(deps.ds, caller, knowledgeBaseId);
  assertDefaultModel(deps.config, 'Searching a knowledge base');
  const searchId = randomUUID();
  await awaitRetrieval(deps, {
    resource: {
      kind: 'knowledge-base-search',
      id: searchId,
      organizationId: caller.organizationId,
      summary: `Search of knowledge base ${kb.name} (${kb.knowledge_base_id})`,
    },
    start: workflowStart.knowledgeBaseSearch({
      searchId,
      knowledgeBaseId: kb.knowledge_base_id,
      organizationId: caller.organizationId,
      createdBy: caller.actor,
      query: body.query,
      args: queryArgsOf(body.query_args),
    }),
  });
  const row = await deps.ds.getRepository(KnowledgeBaseSearch).findOneBy({ knowledge_base_search_id: searchId });
  // No row: the knowledge base was deleted while the search ran.
  if (!row) throw notFound('Knowledge base');
  return row;
}

async function saveSearch(ds: DataSource, row: KnowledgeBaseSearch): Promise<void> {
  // A retried activity finds its row written already.
  await ds
    .getRepository(KnowledgeBaseSearch)
    .createQueryBuilder()
    .insert()
    .values(row as never)
    .orIgnore()
    .execute();
}

export const findSearch = (ds: DataSource, caller: Caller, id: string) =>
  findInOrg(ds, KnowledgeBaseSearch, caller.organizationId, { knowledge_base_search_id: id }, 'Knowledge base search');

export async function listSearches(ds: DataSource, caller: Caller, knowledgeBaseId: string, page: PageRequest) {
  await findInOrg(ds, KnowledgeBase, caller.organizationId, { knowledge_base_id: knowledgeBaseId }, 'Knowledge base');
  return pageInOrg(
    ds,
    KnowledgeBaseSearch,
    caller.organizationId,
    page,
    { knowledge_base_id: knowledgeBaseId },
    { created_at: 'DESC', knowledge_base_search_id: 'DESC' },
  );
}

/**
 * The worker's side of a search: retrieves, has the default model answer from the chunks (citing them) and
 * persists the search (idempotent). MISSING when the knowledge base is gone; model and outside database
 * errors are thrown as they are.
 */
export async function runKnowledgeBaseSearch(
  stores: RetrievalStores,
  models: ModelDriver,
  input: KnowledgeBaseSearchInput,
  signal: AbortSignal,
): Promise<'DONE' | 'MISSING'> {
  const kb = await stores.ds.getRepository(KnowledgeBase).findOneBy({
    knowledge_base_id: input.knowledgeBaseId,
    organization_id: input.organizationId,
  });
  if (!kb) return 'MISSING';
  const entries = await retrieve(stores, models, kb, input.query, input.args, signal);
  const answer = await answerFrom(models, input.query, entries, signal);
  await saveSearch(stores.ds, {
    knowledge_base_search_id: input.searchId,
    knowledge_base_id: kb.knowledge_base_id,
    organization_id: kb.organization_id,
    query: input.query,
    query_args: { ...input.args },
    result: answer.result,
    entries,
    model: answer.model,
    created_by: input.createdBy,
    created_at: new Date(),
  });
  return 'DONE';
}
