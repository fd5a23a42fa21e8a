// The structure run workflow: STARTING, then the process activity racing the run's time limit (a workflow
// timer, so time-skipping tests can prove it), then the terminal write. A `cancel` signal (the api) and a
// workflow cancellation (the Temporal UI) both stop the process and end the run CANCELLED.
// Function runs use this workflow too (id function-run-<uuid>): the activities look at the run's kind.
import { ActivityCancellationType, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { RunStatus } from '../src/persistence/entities/run';
import { runToEnding } from './run-scope';

export { cancelRunSignal, type CancelRunSignal } from './run-scope';

export interface StructureRunWorkflowInput {
  runId: string;
  /** Snapshot of RUN_TIME_LIMIT_SECONDS when the run was created. */
  timeLimitSeconds: number;
  /** Snapshot of RUN_HEARTBEAT_TIMEOUT_SECONDS: how long a silent worker is trusted. */
  heartbeatTimeoutSeconds: number;
}

const { startStructureRun, finishStructureRun } = proxyActivities<Activities>({
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

  // Structure runs have no failure that ends them FAILED: a process's own failure is an ending, not a thrown error.
  return runToEnding(
    { timeLimitSeconds: input.timeLimitSeconds, failedTypes: [] },
    async (startTimer) => {
      if (!(await startStructureRun({ runId: input.runId }))) return undefined;
      startTimer();
      return executeStructureRun({ runId: input.runId });
    },
    (ending) => finishStructureRun({ runId: input.runId, ending }),
  );
}
