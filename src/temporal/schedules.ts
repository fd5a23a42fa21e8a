import { Client, ScheduleAlreadyRunning } from '@temporalio/client';
import type { Logger } from '../logger';

export const RECONCILER_SCHEDULE_ID = 'tarmac-reconciler';

/** Creates the reconciler's schedule once (every worker start tries; the first one wins). */
export async function ensureReconcilerSchedule(client: Client, taskQueue: string, log: Logger): Promise<void> {
  try {
    await client.schedule.create({
      scheduleId: RECONCILER_SCHEDULE_ID,
      spec: { intervals: [{ every: '1 minute' }] },
      action: { type: 'startWorkflow', workflowType: 'reconcilerWorkflow', taskQueue, args: [{}] },
      policies: { overlap: 'SKIP', catchupWindow: '1 minute' },
    });
    log.info({ scheduleId: RECONCILER_SCHEDULE_ID }, 'created the reconciler schedule');
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
}

export const BUILD_CLEANUP_SCHEDULE_ID = 'tarmac-build-cleanup';

/** Creates the schedule that removes unused build directories (activities/build-cleanup.ts), once. */
export async function ensureBuildCleanupSchedule(client: Client, taskQueue: string, log: Logger): Promise<void> {
  try {
    await client.schedule.create({
      scheduleId: BUILD_CLEANUP_SCHEDULE_ID,
      spec: { intervals: [{ every: '10 minutes' }] },
      action: { type: 'startWorkflow', workflowType: 'buildCleanupWorkflow', taskQueue, args: [{}] },
      policies: { overlap: 'SKIP', catchupWindow: '10 minutes' },
    });
    log.info({ scheduleId: BUILD_CLEANUP_SCHEDULE_ID }, 'created the build-cleanup schedule');
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
}
