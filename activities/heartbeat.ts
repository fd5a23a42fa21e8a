// The heartbeats of long activities and the one mapping of a worker's shutdown. An activity that works for a
// while heartbeats every quarter of its heartbeat timeout, between 200 ms and 1 s: at most a second, because a
// heartbeat's answer is how the activity learns it was cancelled (the worker's maxHeartbeatThrottleInterval is
// 1 s too). A worker shutting down cancels its activities with WORKER_SHUTDOWN: that is not the job's
// cancellation, so the attempt fails retryably (WorkerShutdown) and another worker takes the step again.
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';

export const heartbeatEveryMs = (ctx: Context): number =>
  Math.max(200, Math.min(1_000, (ctx.info.heartbeatTimeoutMs ?? 4_000) / 4));

/** The retryable failure a worker's shutdown becomes (`what`: "this run", "this deployment"); undefined for any other error. */
export function shutdownFailure(err: unknown, what = 'this step'): ApplicationFailure | undefined {
  if (!(err instanceof CancelledFailure) || err.message !== 'WORKER_SHUTDOWN') return undefined;
  return ApplicationFailure.retryable(`The worker running ${what} shut down`, 'WorkerShutdown');
}

/**
 * Runs `work` heartbeating (with `details()` as the heartbeat's details) until it settles. `work` is given the
 * beat, to heartbeat at once when it has news. When the activity was cancelled, it throws the cancellation (a
 * worker's shutdown as shutdownFailure), whatever error the aborted work threw.
 */
export async function withHeartbeats<T>(
  work: (beat: () => void, signal: AbortSignal) => Promise<T>,
  opts: { details?: () => unknown } = {},
): Promise<T> {
  const ctx = Context.current();
  const beat = () => ctx.heartbeat(opts.details?.());
  const heartbeats = setInterval(beat, heartbeatEveryMs(ctx));
  try {
    return await work(beat, ctx.cancellationSignal);
  } catch (err) {
    if (!ctx.cancellationSignal.aborted) throw err;
    const reason: unknown = ctx.cancellationSignal.reason;
    throw shutdownFailure(reason) ?? reason ?? err;
  } finally {
    clearInterval(heartbeats);
  }
}
