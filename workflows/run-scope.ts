// The frame of every run workflow (structure, function and tool runs, assistant runs, chat messages): the
// work runs in a cancellable scope bounded by a time limit (a workflow timer); a `cancel` signal (the api) or a workflow
// cancellation (the Temporal UI) cancels it, which stops the process or aborts the model stream of a heartbeating activity; a
// failed activity becomes an ending by its ApplicationFailure type; the terminal write runs whatever
// happened, in a non-cancellable scope.
import {
  ActivityFailure, ApplicationFailure, CancellationScope, defineSignal, isCancellation, setHandler, sleep,
} from '@temporalio/workflow';
import type { RunStatus } from '../src/persistence/entities/run';
import type { RunEnding } from '../src/services/run-lifecycle';

export interface CancelRunSignal {
  /** Who asked (user id or API key id), recorded in status_detail. */
  requestedBy: string;
}

/** Sent by the api's cancel endpoints (and when a resource with open runs is deleted). */
export const cancelRunSignal = defineSignal<[CancelRunSignal]>('cancel');

/** Failure types of model calls that end a run FAILED (the request was refused); any other type ends it ERROR. */
export const MODEL_FAILED_TYPES = ['ModelRequestRejected', 'ModelNotConfigured'];

/** The ending of a run whose work failed (not cancelled): FAILED for `failedTypes`, else ERROR, with the failure's type as reason. */
export function endingOfFailure(err: unknown, failedTypes: readonly string[]): RunEnding {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure && cause.type) {
    return { status: failedTypes.includes(cause.type) ? 'FAILED' : 'ERROR', reason: cause.type, error: cause.message };
  }
  return { status: 'ERROR', reason: 'ExecutionFailed', error: `The run could not be executed: ${(cause as Error)?.message ?? String(err)}` };
}

/**
 * Runs `work` and then `finish(ending)`. `work` calls `startTimer()` once the run has started (the time limit
 * counts from there) and returns the ending, or undefined when there is no run to end (then 'MISSING').
 */
export async function runToEnding(
  opts: { timeLimitSeconds: number; failedTypes: readonly string[] },
  work: (startTimer: () => void) => Promise<RunEnding | undefined>,
  finish: (ending: RunEnding) => Promise<RunStatus | 'MISSING'>,
): Promise<RunStatus | 'MISSING'> {
  const scope = new CancellationScope();
  let cancelRequest: CancelRunSignal | undefined;
  let timedOut = false;
  setHandler(cancelRunSignal, (signal) => {
    cancelRequest ??= signal;
    scope.cancel();
  });
  const timer = new CancellationScope();
  const startTimer = () => {
    void timer
      .run(() => sleep(opts.timeLimitSeconds * 1000))
      .then(() => {
        timedOut = true;
        scope.cancel();
      }, () => undefined);
  };

  let ending: RunEnding | undefined;
  let workflowCancellation: unknown;
  try {
    try {
      ending = await scope.run(() => work(startTimer));
    } finally {
      timer.cancel();
    }
  } catch (err) {
    if (timedOut) {
      ending = { status: 'ERROR', reason: 'TimeLimitExceeded', error: `Run exceeded its time limit of ${opts.timeLimitSeconds} s` };
    } else if (cancelRequest) {
      ending = { status: 'CANCELLED', requestedBy: cancelRequest.requestedBy };
    } else if (isCancellation(err) && CancellationScope.current().consideredCancelled) {
      // Cancelled from the Temporal UI / API: same end, then the workflow itself closes as cancelled.
      ending = { status: 'CANCELLED', requestedBy: 'Temporal workflow cancellation' };
      workflowCancellation = err;
    } else {
      ending = endingOfFailure(err, opts.failedTypes);
    }
  }
  if (!ending) return 'MISSING';
  const finalEnding = ending;
  const status = await CancellationScope.nonCancellable(() => finish(finalEnding));
  if (workflowCancellation) throw workflowCancellation;
  return status;
}
