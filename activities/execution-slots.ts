// The activities of admission (src/jobs/admission.ts): take or wait for an execution slot of the job's
// organization, give it back, and signal `slotGranted` to the workflows of the waiters a change granted; the
// runs a newer run of their concurrency key supersedes are cancelled through the job kernel (signalCancel).
import { WorkflowNotFoundError } from '@temporalio/client';
import type { EntityManager } from 'typeorm';
import type { ActivityDeps } from './deps';
import { acquireSlot, releaseSlot, type SlotGrant, type Superseded } from '../src/jobs/admission';
import { RUN_JOB } from '../src/jobs/kinds';
import { goesOn, ROW_VISIBLE_WAIT_MS } from '../src/jobs/start';
import { markStartingIn } from '../src/services/code/runs/lifecycle';
import { slotGrantedSignal, type ExecutionSlotJob } from '../src/temporal/contracts';
import { signalCancel } from '../src/jobs/cancel';
import { waitFor } from '../src/jobs/await-end';

/** What the workflow learns: it may execute, it waits (and why), or there is no job to execute. */
export type SlotAnswer =
  /** `started`: asked to start the run too, whether it started (or had) and goes on (false: it ended meanwhile). */
  | { admitted: true; started?: boolean }
  | { admitted: false; executing: number; ahead: number; limit: number; message?: string }
  /** Not to execute: its concurrency key is at its limit and its resource's strategy is `skip`. */
  | { skipped: string }
  | 'MISSING'
  | 'ENDED';

/** Signals the granted waiters; one that cannot be reached re-tries on its own timer (or the reconciler frees its slot). */
export async function signalGranted(deps: ActivityDeps, grants: SlotGrant[]): Promise<void> {
  await Promise.all(
    grants.map((g) =>
      deps.temporal.workflow
        .getHandle(g.workflowId)
        .signal(slotGrantedSignal)
        .catch((err: Error) => {
          if (!(err instanceof WorkflowNotFoundError))
            deps.log.warn({ err, workflowId: g.workflowId }, 'a granted execution slot could not be signalled');
        }),
    ),
  );
}

/** Cancels the runs a newer run of their key superseded, through the job kernel (one already gone is settled). */
async function cancelSuperseded(deps: ActivityDeps, superseded: Superseded | undefined): Promise<void> {
  await Promise.all(
    (superseded?.runs ?? []).map((run) =>
      signalCancel(deps.temporal, RUN_JOB, run, superseded!.requestedBy).catch((err: Error) =>
        deps.log.warn({ err, runId: run.run_id }, 'a superseded run could not be cancelled'),
      ),
    ),
  );
}

export function createExecutionSlotActivities(deps: ActivityDeps) {
  const limit = () => deps.config.execution.orgMaxConcurrentRuns;
  return {
    /**
     * Takes an execution slot of the job's organization or queues the job (its status detail says so).
     * Waits for a row committed just after its workflow started; 'MISSING' when it never appears.
     */
    async acquireExecutionSlot(input: {
      job: ExecutionSlotJob;
      workflowId: string;
      /** Start the run (QUEUED → STARTING) in the transaction that admits it (only runs start so). */
      startRun?: boolean;
    }): Promise<SlotAnswer> {
      const { job } = input;
      if (input.startRun && job.kind !== 'run') throw new Error(`a ${job.kind} does not start with its slot`);
      const start = input.startRun ? (em: EntityManager) => markStartingIn(em, job.jobId) : undefined;
      const admission = await waitFor(
        () => acquireSlot(deps.ds, job, { workflowId: input.workflowId, limit: limit(), start }),
        (a) => a.outcome !== 'missing',
        ROW_VISIBLE_WAIT_MS,
      );
      if (admission.outcome === 'missing') return 'MISSING';
      await signalGranted(deps, admission.granted);
      if (admission.outcome === 'ended') return 'ENDED';
      if (admission.outcome === 'skipped') return { skipped: admission.message };
      await cancelSuperseded(deps, admission.superseded);
      if (admission.outcome === 'admitted')
        return start ? { admitted: true, started: goesOn(RUN_JOB, admission.status) } : { admitted: true };
      const { executing, ahead, message } = admission;
      return { admitted: false, executing, ahead, limit: admission.limit, message };
    },

    /** Gives the job's slot (or place in the queue) back; the next waiters of its organization are signalled. */
    async releaseExecutionSlot(input: { job: ExecutionSlotJob }): Promise<void> {
      await signalGranted(deps, await releaseSlot(deps.ds, input.job, { limit: limit() }));
    },
  };
}
