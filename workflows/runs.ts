// The structure run workflow: STARTING, then the process activity racing the run's time limit (a workflow
// timer, so time-skipping tests can prove it), then the terminal write. A `cancel` signal (the api) and a
// workflow cancellation (the Temporal UI) both stop the process and end the run CANCELLED.
// Function runs use this workflow too (id function-run-<uuid>): the activities look at the run's kind.
import {
  ActivityCancellationType, CancellationScope, defineSignal, isCancellation, proxyActivities, setHandler, sleep,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { RunStatus } from '../src/persistence/entities/run';
import type { RunEnding } from '../src/services/run-lifecycle';

export interface StructureRunWorkflowInput {
  runId: string;
  /** Snapshot of RUN_TIME_LIMIT_SECONDS when the run was created. */
  timeLimitSeconds: number;
  /** Snapshot of RUN_HEARTBEAT_TIMEOUT_SECONDS: how long a silent worker is trusted. */
  heartbeatTimeoutSeconds: number;
}

export interface CancelRunSignal {
  /** Who asked (user id or API key id), recorded in status_detail. */
  requestedBy: string;
}

export const cancelRunSignal = defineSignal<[CancelRunSignal]>('cancel');

const { startStructureRun } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  // Quick at first: the api commits the row right after this workflow starts. Unlimited: a database outage
  // is waited out (the activity itself gives up on a row that never appears).
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '10 seconds' },
});
const { finishStructureRun } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

export async function structureRunWorkflow(input: StructureRunWorkflowInput): Promise<RunStatus | 'MISSING'> {
  const { executeStructureRun } = proxyActivities<Activities>({
    // The workflow timer ends the run first; this only bounds an attempt whose worker hangs yet heartbeats.
    startToCloseTimeout: `${input.timeLimitSeconds + 300} seconds`,
    heartbeatTimeout: `${input.heartbeatTimeoutSeconds} seconds`,
    // The workflow waits until the activity has stopped the process before it records the end.
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 5 },
  });

  const work = new CancellationScope();
  let cancelRequest: CancelRunSignal | undefined;
  let timedOut = false;
  setHandler(cancelRunSignal, (signal) => {
    cancelRequest ??= signal;
    work.cancel();
  });

  let ending: RunEnding | undefined;
  let workflowCancellation: unknown;
  try {
    ending = await work.run(async () => {
      if (!(await startStructureRun({ runId: input.runId }))) return undefined;
      const timer = new CancellationScope();
      void timer
        .run(() => sleep(input.timeLimitSeconds * 1000))
        .then(() => {
          timedOut = true;
          work.cancel();
        }, () => undefined);
      try {
        return await executeStructureRun({ runId: input.runId });
      } finally {
        timer.cancel();
      }
    });
  } catch (err) {
    if (timedOut) {
      ending = { status: 'ERROR', reason: 'TimeLimitExceeded', error: `Run exceeded its time limit of ${input.timeLimitSeconds} s` };
    } else if (cancelRequest) {
      ending = { status: 'CANCELLED', requestedBy: cancelRequest.requestedBy };
    } else if (isCancellation(err) && CancellationScope.current().consideredCancelled) {
      // Cancelled from the Temporal UI / API: same end, then the workflow itself closes as cancelled.
      ending = { status: 'CANCELLED', requestedBy: 'Temporal workflow cancellation' };
      workflowCancellation = err;
    } else {
      const cause = (err as { cause?: { message?: string } }).cause?.message ?? (err as Error).message;
      ending = { status: 'ERROR', reason: 'ExecutionFailed', error: `The run could not be executed: ${cause}` };
    }
  }
  if (!ending) return 'MISSING';
  const finalEnding = ending;
  const status = await CancellationScope.nonCancellable(() => finishStructureRun({ runId: input.runId, ending: finalEnding }));
  if (workflowCancellation) throw workflowCancellation;
  return status;
}
