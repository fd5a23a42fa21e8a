// The retriever query workflow (id `retriever-query-<uuid>`): one activity that queries each knowledge base
// component, fuses the rankings, lets the model rerank them when the retriever says so, and persists the
// outputs. Short; the api waits for it (bounded). Retried like a knowledge base query.
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { RetrieverQueryInput } from '../src/temporal/contracts';

const { runRetrieverQuery } = proxyActivities<Activities>({
  startToCloseTimeout: '50 seconds',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '5 seconds', maximumAttempts: 3 },
});

export async function retrieverQueryWorkflow(input: RetrieverQueryInput): Promise<'DONE' | 'MISSING'> {
  return runRetrieverQuery(input);
}
