// The code run workflow (structure, function and tool runs: ids structure-run-, function-run-, tool-run-<uuid>):
// STARTING (a local activity), then the process activity racing the run's time limit (a workflow timer, so time-skipping tests
// can prove it), then the terminal write. A `cancel` signal (the api) and a workflow cancellation (the
// Temporal UI) both stop the process and end the run CANCELLED. The activities look at the run's kind.
// Before STARTING, the run takes an execution slot of its organization (execution-slot.ts): until it has one
// it waits QUEUED, and a cancel then ends it without executing; its concurrency strategy `skip` ends it CANCELLED.
// Runs started since SLOT_STARTS_RUN_PATCH move to STARTING in the local activity that admits them.
// New runs record one patch, CODE_RUN_PATCHES_2, which stands for every patch before it (see below); since it,
// the terminal write gives the execution slot back in its own transaction (one local activity fewer per run).
// A run with a retry policy whose attempt was lost goes back to QUEUED and through all of this again
// (run-retries.ts).
import { patched, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { CodeRunInput, RunStatus } from '../src/temporal/contracts';
import { LOCAL_STATUS_WRITES, longActivity, runToEnding, STATUS_WRITES } from './run-scope';
import { EXECUTION_SLOTS_PATCH, ExecutionSlot, SLOT_STARTS_RUN_PATCH } from './execution-slot';
import { withRetries } from './run-retries';

type CodeRunActivities = Pick<Activities, 'startCodeRun' | 'executeCodeRun' | 'finishCodeRun' | 'retryCodeRun'>;

/**
 * Patch id of the code runs started since it: it stands for every patch a code run asked before it
 * ('local-status-writes', EXECUTION_SLOTS_PATCH, SLOT_STARTS_RUN_PATCH, SLOT_BACKOFF_PATCH), all taken. Each
 * `patched()` a new execution calls records a marker and an upsert of the TemporalChangeVersion search attribute
 * (two history events and a visibility write on the Temporal server); every run asked three. Histories from
 * before it (no marker of it) ask each patch as they did. A patch added later is asked by its own id, after it.
 */
export const CODE_RUN_PATCHES_1 = 'code-run-patches-1';

/**
 * The next generation: it stands for CODE_RUN_PATCHES_1 and for the slot given back by the terminal write
 * (finishCodeRun's `releaseSlot`) instead of a local activity of its own after it. Histories with the marker
 * of CODE_RUN_PATCHES_1 replay as they were recorded.
 */
export const CODE_RUN_PATCHES_2 = 'code-run-patches-2';

/**
 * Whether this run is past the patch `id`: all of them since CODE_RUN_PATCHES_1 (`all`), else each asked;
 * `second`: past CODE_RUN_PATCHES_2 too.
 */
function patchesOfThisRun(): { all: boolean; second: boolean; past: (id: string) => boolean } {
  const second = patched(CODE_RUN_PATCHES_2);
  const all = second || patched(CODE_RUN_PATCHES_1);
  return { all, second, past: (id) => all || patched(id) };
}

/** Which paths a run takes, by the patches its history is past. */
interface CodeRunPaths {
  /** It takes an execution slot (EXECUTION_SLOTS_PATCH). */
  admitted: boolean;
  /** The slot's admission also starts the run (SLOT_STARTS_RUN_PATCH): no start activity of its own. */
  startsWithSlot?: boolean;
  /** The slot's re-asks back off (SLOT_BACKOFF_PATCH), known already (CODE_RUN_PATCHES_1). */
  backoff?: boolean;
  /** The terminal write gives the slot back (CODE_RUN_PATCHES_2). */
  slotEndsWithRun?: boolean;
}

async function codeRun(
  input: CodeRunInput,
  activities: CodeRunActivities,
  { admitted, startsWithSlot = false, backoff = false, slotEndsWithRun = false }: CodeRunPaths,
): Promise<RunStatus | 'MISSING'> {
  const slot = admitted
    ? new ExecutionSlot(
        { kind: 'run', jobId: input.runId, ...(input.inParentSlot ? { inParentSlot: true } : {}) },
        { backoff },
      )
    : undefined;
  try {
    // Each attempt of the run's retry policy (one without a policy has one) within its frame.
    return await withRetries(input.retryPolicy, {
      attempt: (end) =>
        // Code runs have no failure that ends them FAILED: a process's own failure is an ending, not a thrown error.
        runToEnding(
          { timeLimitSeconds: input.timeLimitSeconds, failedTypes: [] },
          async (startTimer) => {
            const startRun = slot !== undefined && startsWithSlot;
            if (slot && !(await slot.acquire({ startRun })))
              return slot.skipped ? { status: 'CANCELLED', requestedBy: slot.skipped } : undefined;
            if (!startRun && !(await activities.startCodeRun({ runId: input.runId }))) return undefined;
            startTimer();
            return activities.executeCodeRun({ runId: input.runId, timeLimitSeconds: input.timeLimitSeconds });
          },
          end,
        ),
      retry: async (write) => {
        const retrying = await activities.retryCodeRun({ runId: input.runId, ...write });
        await slot?.release();
        return retrying;
      },
      finish: async (ending) => {
        const releaseSlot = slotEndsWithRun ? slot?.job : undefined;
        const status = await activities.finishCodeRun({
          runId: input.runId,
          ending,
          ...(releaseSlot ? { releaseSlot } : {}),
        });
        if (releaseSlot) slot!.givenBack();
        else await slot?.release();
        return status;
      },
    });
  } finally {
    await slot?.release();
  }
}

const EXECUTE_RETRY = { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 5 };

export async function codeRunWorkflow(input: CodeRunInput): Promise<RunStatus | 'MISSING'> {
  const { all, second, past } = patchesOfThisRun();
  // Runs started before the status writes became local activities replay with them as activity tasks.
  const { startCodeRun, finishCodeRun } = past('local-status-writes')
    ? proxyLocalActivities<Activities>(LOCAL_STATUS_WRITES)
    : proxyActivities<Activities>(STATUS_WRITES);
  const { retryCodeRun } = proxyLocalActivities<Activities>(LOCAL_STATUS_WRITES);
  const { executeCodeRun } = proxyActivities<Activities>(longActivity(input, EXECUTE_RETRY));
  // Runs started before the fair share execute without a slot.
  return codeRun(
    input,
    { startCodeRun, executeCodeRun, finishCodeRun, retryCodeRun },
    {
      admitted: past(EXECUTION_SLOTS_PATCH),
      startsWithSlot: past(SLOT_STARTS_RUN_PATCH),
      backoff: all, // SLOT_BACKOFF_PATCH: else asked by the slot itself, when it first waits
      slotEndsWithRun: second,
    },
  );
}

/**
 * The same workflow under its former name, with its former activity names: runs started before the rename
 * replay their histories unchanged. Remove once no open workflow of this type is left.
 */
export async function structureRunWorkflow(input: CodeRunInput): Promise<RunStatus | 'MISSING'> {
  const { startStructureRun, finishStructureRun } = proxyActivities<Activities>(STATUS_WRITES);
  const { executeStructureRun } = proxyActivities<Activities>(longActivity(input, EXECUTE_RETRY));
  return codeRun(
    input,
    {
      startCodeRun: startStructureRun,
      executeCodeRun: executeStructureRun,
      finishCodeRun: finishStructureRun,
      retryCodeRun: () => Promise.resolve(false), // its inputs carry no retry policy
    },
    { admitted: false },
  );
}
