// The knowledge base search workflow (id `knowledge-base-search-<uuid>`): one activity that retrieves the
// chunks, has the default model answer from them and persists the search. Short; the api waits for it
// (bounded). A model refusal is not retried; an unreachable provider is retried twice.
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { KnowledgeBaseSearchInput } from '../src/temporal/contracts';

const { runKnowledgeBaseSearch } = proxyActivities<Activities>({
  startToCloseTimeout: '50 seconds',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '5 seconds', maximumAttempts: 3 },
});

export async function knowledgeBaseSearchWorkflow(input: KnowledgeBaseSearchInput): Promise<'DONE' | 'MISSING'> {
  return runKnowledgeBaseSearch(input);
}
