// How often an activity that works for a while heartbeats: a quarter of its heartbeat timeout, between 200 ms and
// 1 s. At most a second, because a heartbeat's answer is how the activity learns it was cancelled (the worker's
// maxHeartbeatThrottleInterval is 1 s too).
import type { Context } from '@temporalio/activity';

export const heartbeatEveryMs = (ctx: Context): number =>
  Math.max(200, Math.min(1_000, (ctx.info.heartbeatTimeoutMs ?? 4_000) / 4));
