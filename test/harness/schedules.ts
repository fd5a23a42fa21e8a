// Schedules that fire every second, for tests and drills that watch several fires: the stack's api keeps
// SCHEDULE_MIN_INTERVAL_SECONDS at its default (a minute), so these go through an api of their own.
import { configWith, getStack, startApi } from './stack';

/** An api on the stack's database and Temporal server that takes `rate(1 second)`; close it after the test. */
export const startApiWithSecondSchedules = () =>
  startApi(getStack().env.client, 0, configWith({ SCHEDULE_MIN_INTERVAL_SECONDS: '1' }));
