// The deployment workflow: QUEUED → DEPLOYING, then the build activity racing the deployment's time limit
// (a workflow timer, so time-skipping tests can prove it), then the terminal write in a non-cancellable
// scope: SUCCEEDED, FAILED (the user's project does not build) or ERROR (infrastructure, time limit).
import {
  ActivityCancellationType, ActivityFailure, CancellationScope, isCancellation, proxyActivities, sleep,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { DeploymentOutcome } from '../activities/deployments';
import type { CodeLocation, CodeResourceKind } from '../src/persistence/entities/code-resource';
import type { DeploymentStatus } from '../src/persistence/entities/deployment';

export interface DeploymentWorkflowInput {
  deploymentId: string;
  kind: CodeResourceKind;
  /** The resource's code location and config file when the deployment was requested. */
  code: CodeLocation;
  configFile: string;
  /** codehost: check out this commit instead of the branch/tag head. */
  commitSha?: string;
  /** codehost: the request's access token, sealed with the secrets key (bound to the deployment id). */
  sealedAccessToken?: string;
  /** Snapshot of DEPLOYMENT_TIME_LIMIT_SECONDS. */
  timeLimitSeconds: number;
  /**
   * Snapshot of RUN_HEARTBEAT_TIMEOUT_SECONDS: a build whose worker is silent this long is presumed lost;
   * cancellation (the time limit) reaches the build within about 80% of it.
   */
  heartbeatTimeoutSeconds: number;
}

const { beginDeployment, finishDeployment } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

const causeOf = (err: unknown): string => {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  return (cause as Error | undefined)?.message ?? String(err);
};

export async function deploymentWorkflow(input: DeploymentWorkflowInput): Promise<DeploymentStatus | 'MISSING'> {
  const { buildDeployment } = proxyActivities<Activities>({
    // The workflow timer ends the deployment first; this only bounds an attempt whose worker hangs yet heartbeats.
    startToCloseTimeout: `${input.timeLimitSeconds + 300} seconds`,
    heartbeatTimeout: `${input.heartbeatTimeoutSeconds} seconds`,
    // The workflow waits until the activity has killed its build processes before recording the end.
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    // Infrastructure faults (blob store, disk, a lost worker) get two more attempts; each starts afresh.
    retry: { initialInterval: '2 seconds', maximumInterval: '30 seconds', maximumAttempts: 3 },
  });

  try {
    if (!(await beginDeployment({ deploymentId: input.deploymentId }))) return 'MISSING';
  } catch {
    return 'MISSING'; // the row never became visible: its transaction rolled back
  }

  const work = new CancellationScope();
  let timedOut = false;
  let outcome: DeploymentOutcome;
  let workflowCancellation: unknown;
  try {
    outcome = await work.run(async () => {
      const timer = new CancellationScope();
      void timer.run(() => sleep(input.timeLimitSeconds * 1000)).then(
        () => {
          timedOut = true;
          work.cancel();
        },
        () => undefined,
      );
      try {
        return await buildDeployment(input);
      } finally {
        timer.cancel();
      }
    });
  } catch (err) {
    if (timedOut) {
      outcome = { status: 'ERROR', detail: { reason: 'TimeLimitExceeded', message: `Deployment exceeded its time limit of ${input.timeLimitSeconds} s` } };
    } else if (isCancellation(err) && CancellationScope.current().consideredCancelled) {
      // Cancelled from the Temporal UI or API: deployments have no CANCELLED state.
      outcome = { status: 'ERROR', detail: { reason: 'Cancelled', message: 'The deployment workflow was cancelled' } };
      workflowCancellation = err;
    } else {
      outcome = { status: 'ERROR', detail: { reason: 'InfrastructureError', message: `The deployment could not be built: ${causeOf(err)}` } };
    }
  }
  const ending = outcome;
  const status = await CancellationScope.nonCancellable(() => finishDeployment({ deploymentId: input.deploymentId, outcome: ending }));
  if (workflowCancellation) throw workflowCancellation;
  return status;
}
