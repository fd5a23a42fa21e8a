import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';

const { cleanBuilds } = proxyActivities<Activities>({
  startToCloseTimeout: '30 minutes',
  retry: { maximumAttempts: 3 },
});

/** Started every 10 minutes by the `tarmac-build-cleanup` schedule (src/temporal/schedules.ts). */
export async function buildCleanupWorkflow(input: { retentionSeconds?: number } = {}) {
  return cleanBuilds({ retentionSeconds: input.retentionSeconds });
}
