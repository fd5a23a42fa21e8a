// Activities of knowledge base searches and retriever queries: retrieve (embedding the query), let the
// model answer or rerank, persist the row the api answers. Model refusals and an outside database that fails
// (a pg_vector knowledge base) are not retried.
import { Context } from '@temporalio/activity';
import type { ActivityDeps } from './deps';
import { outboundPolicyFor } from '../src/security/outbound-policy';
import { ModelError } from '../src/drivers/model/types';
import { KnowledgeBase } from '../src/persistence/entities/knowledge-base';
import { Retriever } from '../src/persistence/entities/retrieval';
import { answerFrom, queryRetriever, retrieve } from '../src/services/knowledge/retrieve';
import { saveSearch } from '../src/services/knowledge/search';
import { saveRetrieverQuery } from '../src/services/knowledge/retrievers';
import type { KnowledgeBaseSearchInput, RetrieverQueryInput } from '../src/temporal/contracts';
import { modelFailure, outsideFailure } from './knowledge-bases';
import { OutsideDatabaseError } from '../src/services/knowledge/chunk-store';

async function withModelFailures<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof ModelError) throw modelFailure(err);
    if (err instanceof OutsideDatabaseError) throw outsideFailure(err);
    throw err;
  }
}

export function createRetrievalActivities({ ds, models, box, config }: ActivityDeps) {
  const stores = { ds, box, outbound: outboundPolicyFor(config) };
  return {
    /** Retrieves, has the default model answer from the chunks (citing them) and persists the search. */
    async runKnowledgeBaseSearch(input: KnowledgeBaseSearchInput): Promise<'DONE' | 'MISSING'> {
      const signal = Context.current().cancellationSignal;
      const kb = await ds.getRepository(KnowledgeBase).findOneBy({
        knowledge_base_id: input.knowledgeBaseId,
        organization_id: input.organizationId,
      });
      if (!kb) return 'MISSING';
      const { entries, answer } = await withModelFailures(async () => {
        const entries = await retrieve(stores, models, kb, input.query, input.args, signal);
        return { entries, answer: await answerFrom(models, input.query, entries, signal) };
      });
      await saveSearch(ds, {
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
    },

    /** Queries each knowledge base component, fuses, reranks when asked, and persists the outputs. */
    async runRetrieverQuery(input: RetrieverQueryInput): Promise<'DONE' | 'MISSING'> {
      const signal = Context.current().cancellationSignal;
      const retriever = await ds.getRepository(Retriever).findOneBy({
        retriever_id: input.retrieverId,
        organization_id: input.organizationId,
      });
      if (!retriever) return 'MISSING';
      const outputs = await withModelFailures(() =>
        queryRetriever(stores, models, retriever, input.query, input.componentArgs, signal),
      );
      await saveRetrieverQuery(ds, {
        retriever_query_id: input.retrieverQueryId,
        retriever_id: retriever.retriever_id,
        organization_id: retriever.organization_id,
        query: input.query,
        query_args: input.componentArgs,
        outputs,
        created_by: input.createdBy,
        created_at: new Date(),
      });
      return 'DONE';
    },
  };
}
