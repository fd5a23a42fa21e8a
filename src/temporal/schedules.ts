// The platform's own Temporal Schedules. Every worker start makes sure they exist; the first one wins.
import { Client, ScheduleAlreadyRunning } from '@temporalio/client';
import type { Logger } from '../logger';
import { WORKFLOW_TYPES } from './contracts';

export interface PlatformSchedule {
  id: string;
  /** What it is for, in the log line of its creation. */
  what: string;
  every: string;
  workflowType: string;
}

export const SCHEDULES: PlatformSchedule[] = [
  // Settles rows whose workflow closed without a terminal state (activities/reconciler.ts).
  { id: 'tarmac-reconciler', what: 'the reconciler', every: '1 minute', workflowType: WORKFLOW_TYPES.reconciler },
  // Removes unused build directories (activities/build-cleanup.ts).
  {
    id: 'tarmac-build-cleanup',
    what: 'the build cleanup',
    every: '10 minutes',
    workflowType: WORKFLOW_TYPES.buildCleanup,
  },
];

/** Creates `schedule` unless it exists; a run still going when the next is due is not doubled (SKIP). */
export async function ensureSchedule(
  client: Client,
  schedule: PlatformSchedule,
  taskQueue: string,
  log: Logger,
): Promise<void> {
  try {
    await client.schedule.create({
      scheduleId: schedule.id,
      spec: { intervals: [{ every: schedule.every }] },
      action: { type: 'startWorkflow', workflowType: schedule.workflowType, taskQueue, args: [{}] },
      policies: { overlap: 'SKIP', catchupWindow: schedule.every },
    });
    log.info({ scheduleId: schedule.id }, `created the schedule of ${schedule.what}`);
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
}
