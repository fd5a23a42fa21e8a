// Admission in a workflow (src/jobs/admission.ts): a run or build first takes an execution slot of its
// organization. Until it has one the workflow waits (the job stays QUEUED, no activity runs, no worker slot
// is held) for a `slotGranted` signal, or for its timer, then asks again; the slot is given back however the
// job ends. The signal is what admits a waiting job (a release grants the oldest waiters and signals them,
// however far back they queued); the timer only makes up for a lost signal, so it backs off. The history shows it: the acquireExecutionSlot markers, the signal, the timer; and the
// workflow's current details say what it waits for.
import {
  CancellationScope,
  condition,
  patched,
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

/** How long a waiting job first trusts the grant signal before it asks again. */
export const SLOT_RETRY_MS = 30_000;

/**
 * Patch id of the re-asks that back off: SLOT_RETRY_MS, doubling up to SLOT_RETRY_MAX_MS, back to SLOT_RETRY_MS
 * when a signal arrives. Before it, every waiting job asked again every 30 s, however long it waited: at 1,000
 * runs in flight (~900 waiting for ~400 s) ~5 extra workflow tasks and acquires per run, the bulk of the
 * worker's CPU there.
 */
export const SLOT_BACKOFF_PATCH = 'execution-slot-backoff';

/**
 * The longest wait between two re-asks, hence the longest a job may wait after a lost grant signal (a crash
 * between a release's commit and its signal), its granted slot idle meanwhile: 240 s (before the patch: 30 s).
 * 30 s doubled three times: a wait of 400 s costs 3 re-asks (at 30, 90, 210 s) instead of 13; doubling further
 * would save less than one re-ask per 4 minutes of waiting while the cost of a lost signal kept growing.
 */
export const SLOT_RETRY_MAX_MS = 240_000;

/** The wait before a job's next re-ask, after `unanswered` re-asks since it last had a signal (or began). */
export const slotRetryDelayMs = (unanswered: number): number =>
  Math.min(SLOT_RETRY_MS * 2 ** unanswered, SLOT_RETRY_MAX_MS);

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

  constructor(
    /**
     * A terminal write that gives the slot back is given this job whether or not acquire() took a slot: a newer
     * run of its concurrency key may have taken a place for it before its workflow asked (admission.ts), and a
     * job without a row gives nothing back.
     */
    readonly job: ExecutionSlotJob,
    /** `backoff: true`: the workflow already knows it is past SLOT_BACKOFF_PATCH (a patch generation covers it). */
    private readonly known: { backoff?: boolean } = {},
  ) {}

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
    let backoff: boolean | undefined; // decided when it first waits: histories from before wait 30 s each time
    let unanswered = 0;
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
      backoff ??= this.known.backoff || patched(SLOT_BACKOFF_PATCH);
      const signalled = await condition(() => grantSignalled, backoff ? slotRetryDelayMs(unanswered) : SLOT_RETRY_MS);
      unanswered = signalled ? 0 : unanswered + 1;
    }
  }

  /** The terminal write gave the job's slot, or its place in the queue, back: release() has nothing left to do. */
  givenBack(): void {
    this.taken = false;
  }

  async release(): Promise<void> {
    if (!this.taken) return;
    await CancellationScope.nonCancellable(() => releaseExecutionSlot({ job: this.job }));
    this.taken = false;
  }
}

/**
 * A job's frame with its slot (absent: a history from before its kind took one): `frame` runs with `finish`
 * wrapped to give the slot back right after the terminal write, and the slot is given back whatever happens.
 */
export async function withSlot<A, S>(
  slot: ExecutionSlot | undefined,
  finish: (ending: A) => Promise<S>,
  frame: (finishThenRelease: (ending: A) => Promise<S>) => Promise<S>,
): Promise<S> {
  try {
    return await frame(async (ending) => {
      const status = await finish(ending);
      await slot?.release();
      return status;
    });
  } finally {
    await slot?.release();
  }
}
