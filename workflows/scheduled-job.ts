// Started by the Temporal Schedule of a data connector or knowledge base (src/temporal/user-schedules.ts):
// creates a job the way the api does, or skips when one is still open; the job runs as its own workflow.
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { ScheduledJobInput, ScheduledJobOutcome } from '../src/temporal/contracts';
import { STATUS_WRITES } from './run-scope';

const { startScheduledJob } = proxyActivities<Activities>(STATUS_WRITES);

export async function scheduledJobWorkflow(input: ScheduledJobInput): Promise<ScheduledJobOutcome> {
  return startScheduledJob(input);
}
