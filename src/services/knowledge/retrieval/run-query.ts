// A query as the api asks for it: the knowledge base must be the caller's (404), then workflow
// `knowledge-base-query-<uuid>` embeds the query text, ranks and persists the entries (the api calls no
// model); the api answers the persisted row. A failed embedding call is a 503 naming the provider's answer.
// runKnowledgeBaseQuery is the worker's side.
import { randomUUID } from 'node:crypto';
import { WorkflowFailedError, type Client } from '@temporalio/client';
import type { DataSource } from 'typeorm';
import type { ModelDriver } from '../../../drivers/model/types';
import type { Caller } from '../../caller';
import type { Config } from '../../../config';
import { conflict, notFound, serviceUnavailable } from '../../../errors';
import { KnowledgeBase, KnowledgeBaseQuery } from '../../../persistence/entities/knowledge-base';
import {
  workflowStart,
  type KnowledgeBaseQueryArgs,
  type KnowledgeBaseQueryInput,
  type WorkflowResource,
  type WorkflowStart,
} from '../../../temporal/contracts';
import { startAndWait } from '../../../jobs/create';
import { findKnowledgeBase } from '../knowledge-bases';
import { DEFAULT_QUERY_COUNT, saveQuery } from './query';
import { retrieve, type RetrievalStores } from './retrieve';

/** How long a query or search may take, embedding and answer included. */
const QUERY_TIMEOUT_MS = 60_000;

/**
 * Starts a short retrieval workflow (query, search, retriever query) and waits for it (bounded). A workflow
 * that failed (the provider refused or could not be reached) is a 503 naming the cause; a pg_vector knowledge
 * base whose outside database failed is a 409 naming it.
 */
export async function awaitRetrieval(
  deps: { temporal: Client; config: Config },
  opts: { resource: WorkflowResource; start: WorkflowStart },
): Promise<void> {
  try {
    await startAndWait(deps.temporal, {
      taskQueue: deps.config.temporal.taskQueue,
      ...opts,
      timeoutMs: QUERY_TIMEOUT_MS,
    });
  } catch (err) {
    if (err instanceof WorkflowFailedError) {
      const cause = (err.cause as { cause?: Error })?.cause ?? err.cause;
      // A pg_vector knowledge base whose own database fails: the user's to fix, not an outage of ours.
      const type = (cause as { type?: string } | undefined)?.type;
      if (type === 'OutsideDatabaseError')
        throw conflict(`The knowledge base's own database cannot serve it: ${cause!.message}`);
      if (type === 'KnowledgeBaseGone') throw conflict(cause!.message);
      throw serviceUnavailable(
        `The ${opts.resource.kind.replace(/-/g, ' ')} could not be answered: ${cause?.message ?? err.message}`,
      );
    }
    throw err;
  }
}

/** The query's arguments with their defaults. */
export function queryArgsOf(given?: Partial<KnowledgeBaseQueryArgs>): KnowledgeBaseQueryArgs {
  return {
    count: given?.count ?? DEFAULT_QUERY_COUNT,
    ...(given?.filter ? { filter: given.filter } : {}),
    ...(given?.distance_metric ? { distance_metric: given.distance_metric } : {}),
    ...(given?.include_vectors ? { include_vectors: true } : {}),
  };
}

export async function queryKnowledgeBase(
  deps: { ds: DataSource; temporal: Client; config: Config },
  caller: Caller,
  knowledgeBaseId: string,
  body: { query: string; query_args?: Partial<KnowledgeBaseQueryArgs> },
): Promise<KnowledgeBaseQuery> {
  const kb = await findKnowledgeBase(deps.ds, caller, knowledgeBaseId);
  const queryId = randomUUID();
  const args = queryArgsOf(body.query_args);
  await awaitRetrieval(deps, {
    resource: {
      kind: 'knowledge-base-query',
      id: queryId,
      organizationId: caller.organizationId,
      summary: `Query of knowledge base ${kb.name} (${kb.knowledge_base_id})`,
    },
    start: workflowStart.knowledgeBaseQuery({
      queryId,
      knowledgeBaseId: kb.knowledge_base_id,
      organizationId: caller.organizationId,
      createdBy: caller.actor,
      query: body.query,
      args,
    }),
  });
  const row = await deps.ds.getRepository(KnowledgeBaseQuery).findOneBy({ knowledge_base_query_id: queryId });
  // No row: the knowledge base was deleted while the query ran.
  if (!row) throw notFound('Knowledge base');
  return row;
}

/**
 * The worker's side of a query: embeds the query (when the knowledge base has a model), ranks the chunks and
 * persists the query (idempotent). MISSING when the knowledge base is gone; model and outside database errors
 * are thrown as they are.
 */
export async function runKnowledgeBaseQuery(
  stores: RetrievalStores,
  models: ModelDriver,
  input: KnowledgeBaseQueryInput,
): Promise<'DONE' | 'MISSING'> {
  const kb = await stores.ds.getRepository(KnowledgeBase).findOneBy({
    knowledge_base_id: input.knowledgeBaseId,
    organization_id: input.organizationId,
  });
  if (!kb) return 'MISSING';
  const entries = await retrieve(stores, models, kb, input.query, input.args);
  await saveQuery(stores.ds, {
    knowledge_base_query_id: input.queryId,
    knowledge_base_id: kb.knowledge_base_id,
    organization_id: kb.organization_id,
    query: input.query,
    query_args: { ...input.args },
    entries,
    created_by: input.createdBy,
    created_at: new Date(),
  });
  return 'DONE';
}
