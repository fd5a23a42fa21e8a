import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { ReconcilerInput, ReconcilerOutcome } from '../src/temporal/contracts';

const { settleOrphans } = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  retry: { maximumAttempts: 3 },
});

/** Started every minute by the `tarmac-reconciler` schedule (src/temporal/schedules.ts). */
export async function reconcilerWorkflow(input: ReconcilerInput = {}): Promise<ReconcilerOutcome> {
  return settleOrphans({ olderThanSeconds: input.olderThanSeconds ?? 60, limit: input.limit ?? 500 });
}
