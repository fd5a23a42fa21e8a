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
