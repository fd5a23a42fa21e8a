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

/** Patch id of the runs that start (QUEUED → STARTING) in the local activity that admits them. */
export const SLOT_STARTS_RUN_PATCH = 'slot-starts-run';

/** How long a waiting job trusts the grant signal before it asks again: a lost signal costs at most this. */
export const SLOT_RETRY_MS = 30_000;

const { acquireExecutionSlot, releaseExecutionSlot } = proxyLocalActivities<Activities>(LOCAL_STATUS_WRITES);

/**
 * The execution slot of one job. `acquire()` answers once the job holds a slot (true), or when there is no
 * job to execute (false: its row never appeared, or it already ended). `release()` gives the slot, or the
 * place in the queue, back, in a non-cancellable scope; it is called after the job's terminal write (so that
 * no more than the share execute or are still recording their end) and again, as a no-op, whatever happened.
 */
export class ExecutionSlot {
  private taken = false;
  /** Set when `acquire()` answered false because the run's concurrency strategy `skip` skipped it: why. */
  skipped: string | undefined;

  constructor(private readonly job: ExecutionSlotJob) {}

  /**
   * `startRun`: the run starts in the transaction that admits it (SLOT_STARTS_RUN_PATCH); then true also says it
   * started, and false with the slot taken says it ended meanwhile (release() gives the slot back).
   */
  async acquire(opts: { startRun?: boolean } = {}): Promise<boolean> {
    let grantSignalled = false;
    setHandler(slotGrantedSignal, () => {
      grantSignalled = true;
    });
    const { workflowId } = workflowInfo();
    this.taken = true; // from here on, whatever the answer (or a cancellation meanwhile), release
    for (;;) {
      grantSignalled = false;
      const answer = await acquireExecutionSlot({
        job: this.job,
        workflowId,
        ...(opts.startRun ? { startRun: true } : {}),
      });
      if (answer === 'MISSING' || answer === 'ENDED' || 'skipped' in answer) {
        this.taken = false;
        if (typeof answer === 'object') this.skipped = answer.skipped;
        return false;
      }
      if (answer.admitted) {
        setCurrentDetails('');
        return answer.started ?? true;
      }
      setCurrentDetails(
        answer.message ??
          `Waiting for an execution slot of its organization: ${answer.executing} executing ` +
            `(ORG_MAX_CONCURRENT_RUNS=${answer.limit}), ${answer.ahead} waiting before it`,
      );
      await condition(() => grantSignalled, SLOT_RETRY_MS);
    }
  }

  async release(): Promise<void> {
    if (!this.taken) return;
    await CancellationScope.nonCancellable(() => releaseExecutionSlot({ job: this.job }));
    this.taken = false;
  }
}
