// The knowledge base query workflow (id `knowledge-base-query-<uuid>`): one activity that embeds the query,
// ranks the chunks and persists the query row. Short; the api waits for it (bounded). A model refusal is not
// retried; an unreachable provider is retried twice.
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { KnowledgeBaseQueryInput } from '../src/temporal/contracts';

const { runKnowledgeBaseQuery } = proxyActivities<Activities>({
  startToCloseTimeout: '50 seconds',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '5 seconds', maximumAttempts: 3 },
});

export async function knowledgeBaseQueryWorkflow(input: KnowledgeBaseQueryInput): Promise<'DONE' | 'MISSING'> {
  return runKnowledgeBaseQuery(input);
}
