// The deployment workflow: QUEUED → DEPLOYING, then the build activity racing the deployment's time limit
// (a workflow timer, so time-skipping tests can prove it), then the terminal write in a non-cancellable
// scope: SUCCEEDED, FAILED (the user's project does not build) or ERROR (infrastructure, time limit).
import { ActivityFailure, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { DeploymentOutcome } from '../activities/deployments';
import type { DeploymentStatus } from '../src/persistence/entities/deployment';
import type { DeploymentInput } from '../src/temporal/contracts';
import { longActivity, STATUS_WRITES, withinLimit } from './run-scope';

const { beginDeployment, finishDeployment } = proxyActivities<Activities>(STATUS_WRITES);

const causeOf = (err: unknown): string => {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  return (cause as Error | undefined)?.message ?? String(err);
};

export async function deploymentWorkflow(input: DeploymentInput): Promise<DeploymentStatus | 'MISSING'> {
  // Infrastructure faults (blob store, disk, a lost worker) get two more attempts; each starts afresh.
  const { buildDeployment } = proxyActivities<Activities>(
    longActivity(input, { initialInterval: '2 seconds', maximumInterval: '30 seconds', maximumAttempts: 3 }),
  );

  try {
    if (!(await beginDeployment({ deploymentId: input.deploymentId }))) return 'MISSING';
  } catch {
    return 'MISSING'; // the row never became visible: its transaction rolled back
  }

  // Deployments have no cancel signal and no CANCELLED state: a workflow cancellation ends them ERROR.
  return withinLimit<DeploymentOutcome, DeploymentStatus | 'MISSING'>(
    {
      timeLimitSeconds: input.timeLimitSeconds,
      cancelSignal: false,
      endings: {
        timedOut: () => ({
          status: 'ERROR',
          detail: {
            reason: 'TimeLimitExceeded',
            message: `Deployment exceeded its time limit of ${input.timeLimitSeconds} s`,
          },
        }),
        cancelled: () => ({
          status: 'ERROR',
          detail: { reason: 'Cancelled', message: 'The deployment workflow was cancelled' },
        }),
        failed: (err) => ({
          status: 'ERROR',
          detail: { reason: 'InfrastructureError', message: `The deployment could not be built: ${causeOf(err)}` },
        }),
      },
    },
    async (startTimer) => {
      startTimer();
      return buildDeployment(input);
    },
    (outcome) => finishDeployment({ deploymentId: input.deploymentId, outcome }),
  );
}
