// Admission in a workflow (src/jobs/admission.ts): a run or build first takes an execution slot of its
// organization. Until it has one the workflow waits (the job stays QUEUED, no activity runs, no worker slot
// is held) for a `slotGranted` signal, or for its timer, then asks again; the slot is given back however the
// job ends. The history shows it: the acquireExecutionSlot markers, the signal, the timer; and the
// workflow's current details say what it waits for.
import {
  CancellationScope,
  condition,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { slotGrantedSignal, type ExecutionSlotJob } from '../src/temporal/contracts';
import { LOCAL_STATUS_WRITES } from './run-scope';

/** Patch id of the workflows that take an execution slot: histories from before replay without one. */
export const EXECUTION_SLOTS_PATCH = 'execution-slots';

/** How long a waiting job trusts the grant signal before it asks again: a lost signal costs at most this. */
export const SLOT_RETRY_MS = 30_000;

const { acquireExecutionSlot, releaseExecutionSlot } = proxyLocalActivities<Activities>(LOCAL_STATUS_WRITES);

/**
 * Runs `body` once the job holds an execution slot of its organization. Answers undefined when there is no
 * job to execute (its row never appeared, or it already ended). The slot, or the place in the queue, is given
 * back whatever happens, in a non-cancellable scope: a job cancelled while waiting never executes.
 */
export async function withExecutionSlot<R>(job: ExecutionSlotJob, body: () => Promise<R>): Promise<R | undefined> {
  let grantSignalled = false;
  setHandler(slotGrantedSignal, () => {
    grantSignalled = true;
  });
  const { workflowId } = workflowInfo();
  try {
    for (;;) {
      grantSignalled = false;
      const answer = await acquireExecutionSlot({ job, workflowId });
      if (answer === 'MISSING' || answer === 'ENDED') return undefined;
      if (answer.admitted) break;
      setCurrentDetails(
        `Waiting for an execution slot of its organization: ${answer.executing} executing ` +
          `(ORG_MAX_CONCURRENT_RUNS=${answer.limit}), ${answer.ahead} waiting before it`,
      );
      await condition(() => grantSignalled, SLOT_RETRY_MS);
    }
    setCurrentDetails('');
    return await body();
  } finally {
    await CancellationScope.nonCancellable(() => releaseExecutionSlot({ job }));
  }
}
