// Activities of knowledge base searches and retriever queries: adapters over src/services/knowledge/ (search.ts,
// retrievers.ts: retrieve, let the model answer or rerank, persist the row the api answers). Model refusals
// and an outside database that fails (a pg_vector knowledge base) are not retried.
import { Context } from '@temporalio/activity';
import type { ActivityDeps } from './deps';
import { outboundPolicyFor } from '../src/security/outbound-policy';
import { ModelError } from '../src/drivers/model/types';
import { runKnowledgeBaseSearch } from '../src/services/knowledge/retrieval/search';
import { runRetrieverQuery } from '../src/services/knowledge/retrieval/retrievers';
import type { KnowledgeBaseSearchInput, RetrieverQueryInput } from '../src/temporal/contracts';
import { modelFailure, outsideFailure } from './knowledge-bases';
import { OutsideDatabaseError } from '../src/services/knowledge/index/chunk-store';
import { KnowledgeBaseGoneError } from '../src/services/knowledge/retrieval/retrieve';

async function withModelFailures<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof ModelError) throw modelFailure(err);
    if (err instanceof OutsideDatabaseError || err instanceof KnowledgeBaseGoneError) throw outsideFailure(err);
    throw err;
  }
}

export function createRetrievalActivities({ ds, models, box, config }: ActivityDeps) {
  const stores = { ds, box, outbound: outboundPolicyFor(config) };
  return {
    /** Retrieves, has the default model answer from the chunks (citing them) and persists the search. */
    async runKnowledgeBaseSearch(input: KnowledgeBaseSearchInput): Promise<'DONE' | 'MISSING'> {
      const signal = Context.current().cancellationSignal;
      return withModelFailures(() => runKnowledgeBaseSearch(stores, models, input, signal));
    },

    /** Queries each knowledge base component, fuses, reranks when asked, and persists the outputs. */
    async runRetrieverQuery(input: RetrieverQueryInput): Promise<'DONE' | 'MISSING'> {
      const signal = Context.current().cancellationSignal;
      return withModelFailures(() => runRetrieverQuery(stores, models, input, signal));
    },
  };
}
