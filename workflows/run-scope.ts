// The frame of every run workflow (structure, function and tool runs, assistant runs, chat messages), of
// deployments and of jobs (knowledge base jobs, data jobs, integration deliveries): the work runs in a
// cancellable scope bounded by a time limit (a workflow timer); a `cancel` signal (the api) or a workflow
// cancellation (the Temporal UI) cancels it, which stops the process or aborts the model stream of a
// heartbeating activity; a failed activity becomes an ending; the terminal write runs whatever happened, in a
// non-cancellable scope. Also the activity option presets every workflow uses.
import {
  ActivityCancellationType,
  ActivityFailure,
  ActivityOptions,
  ApplicationFailure,
  CancellationScope,
  isCancellation,
  LocalActivityOptions,
  RetryPolicy,
  setHandler,
  sleep,
} from '@temporalio/workflow';
import {
  cancelRunSignal,
  type CancelRunSignal,
  type JobEnding,
  type RunEnding,
  type RunStatus,
} from '../src/temporal/contracts';

/** The short status writes of every workflow: seconds each, retried until the database answers. */
export const STATUS_WRITES: ActivityOptions = {
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
};

/**
 * The same writes as local activities: run in the worker that runs the workflow task, with no activity task
 * dispatched and no extra workflow task, so a run's process starts one round trip sooner and its end is
 * recorded one sooner. Retries beyond `localRetryThreshold` wait on a workflow timer.
 */
export const LOCAL_STATUS_WRITES: LocalActivityOptions = {
  startToCloseTimeout: '30 seconds',
  localRetryThreshold: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
};

/**
 * The long activity of a run or build (a process, a model stream): the workflow timer ends it first, the
 * start-to-close timeout only bounds an attempt whose worker hangs yet heartbeats; a silent worker is
 * presumed lost after the heartbeat timeout; the workflow waits until the activity has stopped its
 * process or stream before it records the end.
 */
export function longActivity(
  limits: { timeLimitSeconds: number; heartbeatTimeoutSeconds: number },
  retry: RetryPolicy,
): ActivityOptions {
  return {
    startToCloseTimeout: `${limits.timeLimitSeconds + 300} seconds`,
    heartbeatTimeout: `${limits.heartbeatTimeoutSeconds} seconds`,
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry,
  };
}

/** Failure types of model calls that end a run FAILED (the request was refused); any other type ends it ERROR. */
export const MODEL_FAILED_TYPES = ['ModelRequestRejected', 'ModelNotConfigured'];

/** What made the work fail: the cause of a failed activity, else the error itself. */
export const causeOf = (err: unknown): unknown => (err instanceof ActivityFailure ? err.cause : err);

/** The ending of a run whose work failed (not cancelled): FAILED for `failedTypes`, else ERROR, with the failure's type as reason. */
export function endingOfFailure(err: unknown, failedTypes: readonly string[]): RunEnding {
  const cause = causeOf(err);
  if (cause instanceof ApplicationFailure && cause.type) {
    return { status: failedTypes.includes(cause.type) ? 'FAILED' : 'ERROR', reason: cause.type, error: cause.message };
  }
  return {
    status: 'ERROR',
    reason: 'ExecutionFailed',
    error: `The run could not be executed: ${(cause as Error)?.message ?? String(err)}`,
  };
}

/** Who `Endings.cancelled` names when the workflow itself was cancelled (the Temporal UI or API), not signalled. */
export const WORKFLOW_CANCELLATION = 'Temporal workflow cancellation';

/** How a piece of work ended when it did not end by itself. */
export interface Endings<E> {
  timedOut: () => E;
  /** `by`: who asked (the cancel signal's requestedBy, or the Temporal workflow cancellation). */
  cancelled: (by: string) => E;
  failed: (err: unknown) => E;
}

/** A run's time limit held while it waits for a person (docs/waitpoints.md): the wait does not count. */
export interface LimitClock {
  pause(): void;
  resume(): void;
}

/**
 * The frame of every run and build: `work` runs in a cancellable scope; `startTimer()` (called by `work`
 * once there is something to limit) starts the time limit, a workflow timer; a `cancel` signal (when
 * `cancelSignal`) or a workflow cancellation cancels the scope. `work` answers the ending, or undefined
 * when there is nothing to end ('MISSING'); otherwise `endings` names it. `finish(ending)` runs whatever
 * happened, in a non-cancellable scope; a workflow cancellation is rethrown after it.
 */
export async function withinLimit<E, R>(
  opts: { timeLimitSeconds: number; cancelSignal: boolean; endings: Endings<E> },
  work: (startTimer: () => void, limit: LimitClock) => Promise<E | undefined>,
  /** `cancelRequest`: the cancel signal, when one came (even if the work ended by itself first). */
  finish: (ending: E, cancelRequest?: CancelRunSignal) => Promise<R>,
): Promise<R | 'MISSING'> {
  const scope = new CancellationScope();
  let cancelRequest: CancelRunSignal | undefined;
  let timedOut = false;
  if (opts.cancelSignal) {
    setHandler(cancelRunSignal, (signal) => {
      cancelRequest ??= signal;
      scope.cancel();
    });
  }
  let remainingMs = opts.timeLimitSeconds * 1000;
  let armedAt: number | undefined;
  let timer: CancellationScope | undefined;
  // The timer's scope is a child of the frame's own, not of the work's (armed from inside it): cancelling the work
  // leaves the timer to the `finally` below, as histories recorded before the clock could pause expect.
  const outer = CancellationScope.current();
  const arm = () => {
    const armed = new CancellationScope({ cancellable: true, parent: outer });
    timer = armed;
    armedAt = Date.now();
    void armed
      .run(() => sleep(remainingMs))
      .then(
        () => {
          timedOut = true;
          scope.cancel();
        },
        () => undefined,
      );
  };
  const limit: LimitClock = {
    pause: () => {
      if (!timer || armedAt === undefined) return;
      remainingMs = Math.max(1, remainingMs - (Date.now() - armedAt));
      timer.cancel();
      timer = undefined;
    },
    resume: () => {
      if (!timer && armedAt !== undefined) arm();
    },
  };

  let ending: E | undefined;
  let workflowCancellation: unknown;
  try {
    try {
      ending = await scope.run(() => work(arm, limit));
    } finally {
      timer?.cancel();
    }
  } catch (err) {
    if (timedOut) {
      ending = opts.endings.timedOut();
    } else if (cancelRequest) {
      ending = opts.endings.cancelled(cancelRequest.requestedBy);
    } else if (isCancellation(err) && CancellationScope.current().consideredCancelled) {
      // Cancelled from the Temporal UI / API: the same end, then the workflow itself closes as cancelled.
      ending = opts.endings.cancelled(WORKFLOW_CANCELLATION);
      workflowCancellation = err;
    } else {
      ending = opts.endings.failed(err);
    }
  }
  if (!ending) return 'MISSING';
  const finalEnding = ending;
  const status = await CancellationScope.nonCancellable(() => finish(finalEnding, cancelRequest));
  if (workflowCancellation) throw workflowCancellation;
  return status;
}

/** A run (structure, function, tool, assistant run, chat message) within its frame: `cancel` signal, time limit, endings. */
export function runToEnding(
  opts: { timeLimitSeconds: number; failedTypes: readonly string[] },
  work: (startTimer: () => void, limit: LimitClock) => Promise<RunEnding | undefined>,
  finish: (ending: RunEnding, cancelRequest?: CancelRunSignal) => Promise<RunStatus | 'MISSING'>,
): Promise<RunStatus | 'MISSING'> {
  return withinLimit<RunEnding, RunStatus | 'MISSING'>(
    {
      timeLimitSeconds: opts.timeLimitSeconds,
      cancelSignal: true,
      endings: {
        timedOut: () => ({
          status: 'ERROR',
          reason: 'TimeLimitExceeded',
          error: `Run exceeded its time limit of ${opts.timeLimitSeconds} s`,
        }),
        cancelled: (requestedBy) => ({ status: 'CANCELLED', requestedBy }),
        failed: (err) => endingOfFailure(err, opts.failedTypes),
      },
    },
    work,
    finish,
  );
}

/**
 * A job (knowledge base job, data job, integration delivery) within its frame: `cancel` signal, time limit.
 * Jobs end FAILED when the frame ends them: `TimeLimitExceeded` ("<subject> exceeded its time limit of N s"),
 * or the failed activity's type (`failedReason` when it has none) with its message.
 */
export function jobToEnding<E extends JobEnding, S>(
  opts: { timeLimitSeconds: number; subject: string; failedReason: string },
  work: (startTimer: () => void) => Promise<E | undefined>,
  finish: (ending: E | JobEnding) => Promise<S | 'MISSING'>,
): Promise<S | 'MISSING'> {
  return withinLimit<E | JobEnding, S | 'MISSING'>(
    {
      timeLimitSeconds: opts.timeLimitSeconds,
      cancelSignal: true,
      endings: {
        timedOut: () => ({
          status: 'FAILED',
          reason: 'TimeLimitExceeded',
          message: `${opts.subject} exceeded its time limit of ${opts.timeLimitSeconds} s`,
        }),
        cancelled: (requestedBy) => ({ status: 'CANCELLED', requestedBy }),
        failed: (err) => {
          const cause = causeOf(err);
          return {
            status: 'FAILED',
            reason: cause instanceof ApplicationFailure && cause.type ? cause.type : opts.failedReason,
            message: (cause as Error)?.message ?? String(err),
          };
        },
      },
    },
    work,
    finish,
  );
}
