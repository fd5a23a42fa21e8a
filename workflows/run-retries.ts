// Retries of lost runs in the run workflow (docs/run-control.md#retries-of-lost-runs): each attempt is a whole
// frame (run-scope.ts: admission, start, the process under its time limit); when an attempt's ending is one its
// retry policy retries, the run goes back to QUEUED as its next attempt (the `retry` write, then the slot is
// given back), waits its backoff on a workflow timer (visible in the Temporal UI, skipped by time-skipping
// tests), and goes through admission again. A cancel during the wait ends it CANCELLED at once. Runs without a
// policy never reach a retry: their commands are those of before (the retry is behind `patched` besides).
import {
  CancellationScope,
  condition,
  isCancellation,
  patched,
  setCurrentDetails,
  setHandler,
} from '@temporalio/workflow';
import {
  cancelRunSignal,
  nextRetry,
  type CancelRunSignal,
  type RetryPolicy,
  type RetryWrite,
  type RunEnding,
  type RunStatus,
} from '../src/temporal/contracts';

/** Patch id of the first retry of a run: histories from before never retried. */
export const RUN_RETRIES_PATCH = 'run-retries';

export type RunOutcome = RunStatus | 'MISSING';

/** A cancel that came while the run waited for its next attempt, or a workflow cancellation (then rethrown). */
type WaitEnd = { by: string; workflowCancellation?: unknown } | undefined;

/**
 * Runs `attempt(end)` (one frame, whose terminal step is `end(ending, cancelRequest)`) until an attempt ends
 * in a way `policy` does not retry, or its attempts are spent: then `finish(ending)` records the end. Before
 * each retry, `retry(...)` sends the run back to QUEUED (false: it ended meanwhile, then it is finished).
 */
export async function withRetries(
  policy: RetryPolicy | null | undefined,
  ops: {
    attempt: (end: (ending: RunEnding, cancelRequest?: CancelRunSignal) => Promise<RunOutcome>) => Promise<RunOutcome>;
    retry: (write: RetryWrite) => Promise<boolean>;
    finish: (ending: RunEnding) => Promise<RunOutcome>;
  },
): Promise<RunOutcome> {
  for (let attempt = 1; ; attempt++) {
    let wait: { seconds: number; cancel: () => CancelRunSignal | undefined } | undefined;
    const outcome = await ops.attempt(async (ending, cancelRequest) => {
      const retry = cancelRequest ? undefined : nextRetry(policy, attempt, ending);
      if (retry && patched(RUN_RETRIES_PATCH)) {
        // From here a cancel is the wait's: the frame's handler is replaced before the run goes back to QUEUED.
        const cancel = listenForCancel();
        if (await ops.retry({ attempt, ending, ...retry })) {
          wait = { seconds: retry.delaySeconds, cancel };
          return 'QUEUED';
        }
      }
      return ops.finish(ending);
    });
    if (!wait) return outcome;
    const cancelled = await backoff(wait.seconds, wait.cancel, `attempt ${attempt + 1} of ${policy!.max_attempts}`);
    if (cancelled) {
      const status = await CancellationScope.nonCancellable(() =>
        ops.finish({ status: 'CANCELLED', requestedBy: cancelled.by }),
      );
      if (cancelled.workflowCancellation) throw cancelled.workflowCancellation;
      return status;
    }
  }
}

/** Takes over the `cancel` signal; answers the first request received since. */
function listenForCancel(): () => CancelRunSignal | undefined {
  let request: CancelRunSignal | undefined;
  setHandler(cancelRunSignal, (signal) => {
    request ??= signal;
  });
  return () => request;
}

/** Waits `seconds` on a workflow timer, or until a cancel (signal, or workflow cancellation) comes. */
async function backoff(seconds: number, cancel: () => CancelRunSignal | undefined, next: string): Promise<WaitEnd> {
  setCurrentDetails(`Retrying: ${next} starts in ${seconds} s (retry policy)`);
  try {
    if (seconds > 0) await condition(() => cancel() !== undefined, seconds * 1000);
  } catch (err) {
    if (isCancellation(err)) return { by: 'Temporal workflow cancellation', workflowCancellation: err };
    throw err;
  }
  setCurrentDetails('');
  const request = cancel();
  return request && { by: request.requestedBy };
}
