// Schedules of runs (docs/run-control.md#schedules): how often one may fire.
import type { EnvReader } from './env';

export interface ScheduleSettings {
  /**
   * The shortest interval of a `rate(...)` schedule of runs, 1-60 seconds. A cron expression fires at most once
   * a minute anyway; below a minute each schedule is a workflow start per interval, so one organization's
   * schedules could take the Temporal server and the workers.
   */
  scheduleMinIntervalSeconds: number;
}

export function readSchedules(env: EnvReader): ScheduleSettings {
  return { scheduleMinIntervalSeconds: env.int('SCHEDULE_MIN_INTERVAL_SECONDS', 60, 1, 60) };
}
