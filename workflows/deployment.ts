// The deployment workflow: QUEUED → DEPLOYING, then the build activity racing the deployment's time limit
// (a workflow timer, so time-skipping tests can prove it), then the terminal write in a non-cancellable
// scope: SUCCEEDED, FAILED (the user's project does not build) or ERROR (infrastructure, time limit, cancelled).
// Before DEPLOYING, the build takes an execution slot of its organization (execution-slot.ts): until it has
// one it waits QUEUED. A `cancel` signal (the api's cancel, since DEPLOYMENT_PATCHES_1) or a workflow cancellation
// stops the build's processes (the build activity heartbeats) or the wait for a slot, and ends it ERROR with
// reason Cancelled: deployments have no CANCELLED status (the clients know QUEUED, DEPLOYING, SUCCEEDED, FAILED
// and ERROR).
import { isCancellation, patched, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { DeploymentInput, DeploymentOutcome, DeploymentStatus } from '../src/temporal/contracts';
import { causeOf, Endings, longActivity, STATUS_WRITES, withinLimit, WORKFLOW_CANCELLATION } from './run-scope';
import { EXECUTION_SLOTS_PATCH, ExecutionSlot } from './execution-slot';

const { beginDeployment, finishDeployment } = proxyActivities<Activities>(STATUS_WRITES);

const messageOf = (err: unknown): string => (causeOf(err) as Error | undefined)?.message ?? String(err);

/**
 * Patch id of the deployments started since it: it stands for every patch a deployment asked before it
 * (EXECUTION_SLOTS_PATCH, SLOT_BACKOFF_PATCH), all taken, so that a new deployment records one marker (each
 * `patched()` is a marker and a search attribute upsert), and brings the handler of the `cancel` signal.
 * Histories from before it ask each patch as they did, and have no handler: a signal sent to one stays unhandled.
 */
export const DEPLOYMENT_PATCHES_1 = 'deployment-patches-1';

export async function deploymentWorkflow(input: DeploymentInput): Promise<DeploymentStatus | 'MISSING'> {
  // Infrastructure faults (blob store, disk, a lost worker) get two more attempts; each starts afresh.
  const { buildDeployment } = proxyActivities<Activities>(
    longActivity(input, { initialInterval: '2 seconds', maximumInterval: '30 seconds', maximumAttempts: 3 }),
  );

  const begin = async (): Promise<boolean> => {
    try {
      return await beginDeployment({ deploymentId: input.deploymentId });
    } catch (err) {
      if (isCancellation(err)) throw err;
      return false; // the row never became visible: its transaction rolled back
    }
  };
  // No CANCELLED state: a cancel ends them ERROR, reason Cancelled (said by whom when a cancel signal asked).
  const endings: Endings<DeploymentOutcome> = {
    timedOut: () => ({
      status: 'ERROR',
      detail: {
        reason: 'TimeLimitExceeded',
        message: `Deployment exceeded its time limit of ${input.timeLimitSeconds} s`,
      },
    }),
    cancelled: (requestedBy) => ({
      status: 'ERROR',
      detail:
        requestedBy === WORKFLOW_CANCELLATION
          ? { reason: 'Cancelled', message: 'The deployment workflow was cancelled' }
          : { reason: 'Cancelled', message: `Cancelled by ${requestedBy}`, requested_by: requestedBy },
    }),
    failed: (err) => ({
      status: 'ERROR',
      detail: { reason: 'InfrastructureError', message: `The deployment could not be built: ${messageOf(err)}` },
    }),
  };
  const finish = (outcome: DeploymentOutcome) => finishDeployment({ deploymentId: input.deploymentId, outcome });
  const generation = patched(DEPLOYMENT_PATCHES_1);
  const slots = generation || patched(EXECUTION_SLOTS_PATCH);
  const opts = { timeLimitSeconds: input.timeLimitSeconds, cancelSignal: generation, endings };

  if (slots) {
    // The wait for a slot is inside the frame, so that a workflow cancellation meanwhile still ends the deployment.
    const slot = new ExecutionSlot({ kind: 'deployment', jobId: input.deploymentId }, { backoff: generation });
    try {
      return await withinLimit(
        opts,
        async (startTimer) => {
          if (!(await slot.acquire()) || !(await begin())) return undefined;
          startTimer();
          return buildDeployment(input);
        },
        async (outcome) => {
          const status = await finish(outcome);
          await slot.release();
          return status;
        },
      );
    } finally {
      await slot.release();
    }
  }
  // Deployments started before the fair share: DEPLOYING first, then the frame.
  if (!(await begin())) return 'MISSING';
  return withinLimit(
    opts,
    async (startTimer) => {
      startTimer();
      return buildDeployment(input);
    },
    finish,
  );
}
