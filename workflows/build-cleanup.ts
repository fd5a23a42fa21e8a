import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type {
  BuildCleanupInput,
  BuildCleanupOutcome,
  BuildRemovalInput,
  BuildRemovalOutcome,
} from '../src/temporal/contracts';

const { cleanBuilds } = proxyActivities<Activities>({
  startToCloseTimeout: '30 minutes',
  retry: { maximumAttempts: 3 },
});

/** Started every 10 minutes by the `tarmac-build-cleanup` schedule (src/temporal/schedules.ts). */
export async function buildCleanupWorkflow(input: BuildCleanupInput = {}): Promise<BuildCleanupOutcome> {
  return cleanBuilds({ retentionSeconds: input.retentionSeconds });
}

// Retried until it is done: a deleted resource's builds must not stay (the schedule's orphan sweep is the
// fallback only for a removal that never started).
const { removeBuilds } = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  retry: { initialInterval: '5 seconds', maximumInterval: '5 minutes' },
});

/** Started by the api when a structure, function or tool is deleted: its builds go with it. */
export async function buildRemovalWorkflow(input: BuildRemovalInput): Promise<BuildRemovalOutcome> {
  return removeBuilds({ deploymentIds: input.deploymentIds });
}
