// The assistant run workflow: STARTING; the assistant's tools described (child tool runs, cached per
// deployment); RUNNING; then model steps: each step asks the model (an activity that streams tokens into
// events and heartbeats), and each function call it makes runs a structure or tool run as a child workflow
// (or, for a knowledge base or retriever function, a retrieval activity) whose result goes back to the model, up to `maxSteps` steps. The time limit is a workflow timer; a
// `cancel` signal or a workflow cancellation (Temporal UI) aborts the model stream and the child runs.
// A call of a tool that requires approval waits for a person first (decideApprovals, docs/waitpoints.md), holding
// nothing: no activity, no execution slot, its time limit stopped.
// Run control (docs/run-control.md), for runs started since ASSISTANT_RUN_CONTROL_PATCH: before STARTING the run
// takes an execution slot of its organization (execution-slot.ts: its assistant's concurrency, the queue's pause,
// ORG_MAX_CONCURRENT_RUNS), and the runs it calls execute in that slot; an attempt whose worker was lost (or that
// its retry policy otherwise retries) goes back to QUEUED and runs again from the start (run-retries.ts).
import {
  ApplicationFailure,
  ChildWorkflowFailure,
  condition,
  executeChild,
  isCancellation,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  TimeoutFailure,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import {
  APPROVAL_NOTIFY_ATTEMPTS,
  type ApprovalDecision,
  type AssistantRunInput,
  type CancelRunSignal,
  type ChildRun,
  type CodeRunWorkflow,
  type RunEnding,
  type RunStatus,
  startOptionsFor,
  type WaitpointCompletedSignal,
  waitpointCompletedSignal,
  WORKFLOW_TYPES,
} from '../src/temporal/contracts';
import {
  causeOf,
  type LimitClock,
  LOCAL_STATUS_WRITES,
  longActivity,
  MODEL_FAILED_TYPES,
  runToEnding,
  STATUS_WRITES,
} from './run-scope';
import { ExecutionSlot } from './execution-slot';
import { withRetries } from './run-retries';

const {
  startAssistantRun,
  planChildRun,
  resolveAssistantTools,
  recordToolCallResult,
  finishAssistantRun,
  openToolApproval,
  settleToolApproval,
} = proxyActivities<Activities>(STATUS_WRITES);
const { retryAssistantRun } = proxyLocalActivities<Activities>(LOCAL_STATUS_WRITES);
// A webhook that does not take the post is asked again, then the run records that it could not (and waits all the same).
const { notifyApproval } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumAttempts: APPROVAL_NOTIFY_ATTEMPTS },
});

/** Patch id of assistant runs that take an execution slot and follow a retry policy: histories from before do neither. */
export const ASSISTANT_RUN_CONTROL_PATCH = 'assistant-run-control';

/**
 * Patch id of assistant runs whose calls of a tool that requires approval wait for it (docs/waitpoints.md):
 * asked at the first step that calls such a tool; histories from before call every function at once.
 */
export const ASSISTANT_APPROVALS_PATCH = 'assistant-approvals';

/**
 * A long activity whose every attempt timed out (the worker running it went silent, or none could) ends the
 * attempt `ERROR` `WorkerLost`: what a retry policy's `on: ["WorkerLost"]` retries.
 */
async function orWorkerLost<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (!(causeOf(err) instanceof TimeoutFailure)) throw err;
    throw ApplicationFailure.create({
      type: 'WorkerLost',
      nonRetryable: true,
      message: `The worker running this run stopped (${(causeOf(err) as TimeoutFailure).message})`,
    });
  }
}

export async function assistantRunWorkflow(input: AssistantRunInput): Promise<RunStatus | 'MISSING'> {
  // Runs started before run control of assistants replay without a slot, with one attempt.
  const controlled = patched(ASSISTANT_RUN_CONTROL_PATCH);
  const slot = controlled ? new ExecutionSlot({ kind: 'run', jobId: input.runId }) : undefined;
  const long = <T>(work: () => Promise<T>) => (controlled ? orWorkerLost(work) : work());
  const { assistantModelStep, runAssistantRetrieval } = proxyActivities<Activities>(
    longActivity(input, { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 3 }),
  );

  /** A structure or tool run as a child workflow (structure-run-<uuid> / tool-run-<uuid>), visible under this one. */
  const runChild = async (plan: ChildRun) => {
    const { workflowIdConflictPolicy: _notForChildren, ...options } = startOptionsFor(
      { kind: plan.workflowKind, id: plan.childRunId, organizationId: plan.organizationId, summary: plan.summary },
      workflowInfo().taskQueue,
    );
    try {
      // Runs that started their first child before the code run rename replay it under its former name.
      const childType = patched('code-run-workflow') ? WORKFLOW_TYPES.codeRun : 'structureRunWorkflow';
      await executeChild<CodeRunWorkflow>(childType, {
        ...options,
        args: [
          {
            runId: plan.childRunId,
            timeLimitSeconds: input.timeLimitSeconds,
            heartbeatTimeoutSeconds: input.heartbeatTimeoutSeconds,
            ...(controlled ? { inParentSlot: true } : {}),
          },
        ],
      });
    } catch (err) {
      // A child that failed as a workflow still has its row (settled by the reconciler); its result is read from there.
      if (!(err instanceof ChildWorkflowFailure) || isCancellation(err)) throw err;
    }
  };

  // Completions of the run's waitpoints, by id: the first signal for one wins (a second changes nothing).
  const completions = new Map<string, WaitpointCompletedSignal>();
  setHandler(waitpointCompletedSignal, (completion) => {
    if (!completions.has(completion.waitpointId)) completions.set(completion.waitpointId, completion);
  });
  let approvals: boolean | undefined;

  /**
   * The calls of step `step` whose tools require approval wait for it: their waitpoints open, the run gives back
   * its execution slot and its time limit stops while they wait (holding no activity and no worker), each until
   * its completion or its own timeout; then it takes a slot again. Answers each waited call's decision, or false
   * when the run ended while it waited for the slot.
   */
  const decideApprovals = async (step: number, toolCallIds: string[], limit: LimitClock) => {
    const decisions = new Map<string, ApprovalDecision>();
    const asks = toolCallIds.map((toolCallId) => ({ toolCallId, waitpointId: uuid4() }));
    const opened = (
      await Promise.all(
        asks.map(async (ask) => ({ ...ask, wait: await openToolApproval({ runId: input.runId, step, ...ask }) })),
      )
    ).filter((o) => o.wait !== null);
    if (!opened.length) return decisions;
    limit.pause();
    await slot?.release();
    // Posted to the tool's approval webhook while it waits (a short activity each, retried).
    const notified = Promise.all(
      opened
        .filter((o) => o.wait!.notify)
        // Its last attempt records a failure itself; one that timed out still leaves the run waiting, not failed.
        .map((o) => notifyApproval({ runId: input.runId, waitpointId: o.waitpointId }).catch(() => undefined)),
    );
    await Promise.all(
      opened.map(async ({ toolCallId, waitpointId, wait }) => {
        await condition(() => completions.has(waitpointId), wait!.timeoutSeconds * 1000);
        const completion = completions.get(waitpointId) ?? null;
        decisions.set(toolCallId, await settleToolApproval({ runId: input.runId, waitpointId, completion }));
      }),
    );
    await notified;
    if (slot && !(await slot.acquire())) return false;
    limit.resume();
    return decisions;
  };

  const attempt = (end: (ending: RunEnding, cancelRequest?: CancelRunSignal) => Promise<RunStatus | 'MISSING'>) =>
    runToEnding(
      { timeLimitSeconds: input.timeLimitSeconds, failedTypes: MODEL_FAILED_TYPES },
      async (startTimer, limit) => {
        if (slot && !(await slot.acquire()))
          return slot.skipped ? ({ status: 'CANCELLED', requestedBy: slot.skipped } satisfies RunEnding) : undefined;
        const start = await startAssistantRun({ runId: input.runId });
        if (!start) return undefined;
        startTimer();
        // Tools without a cached description of their current deployment are described now, in parallel.
        const failures = await Promise.all(
          start.toolsToDescribe.map(async (toolId) => {
            const plan = await planChildRun({ runId: input.runId, childRunId: uuid4(), purpose: { describe: toolId } });
            if (!('childRunId' in plan)) return { toolId, error: 'error' in plan ? plan.error : 'Not a tool' };
            await runChild(plan);
            return undefined;
          }),
        );
        const setupEnding = await resolveAssistantTools({
          runId: input.runId,
          timeLimitSeconds: input.timeLimitSeconds,
          failures: failures.filter((f) => f !== undefined),
        });
        if (setupEnding) return setupEnding;

        for (let step = 1; step <= input.maxSteps; step++) {
          const result = await long(() => assistantModelStep({ runId: input.runId, step }));
          if (result.kind === 'answer') return { status: 'SUCCEEDED', message: null } satisfies RunEnding;
          // Asked only for a step that calls such a tool: each patched() is a marker in the history.
          const decisions =
            result.approvals && (approvals ??= patched(ASSISTANT_APPROVALS_PATCH))
              ? await decideApprovals(step, result.approvals, limit)
              : new Map<string, ApprovalDecision>();
          if (decisions === false) return undefined; // the run ended while it waited for a slot again
          await Promise.all(
            result.toolCallIds.map(async (toolCallId) => {
              const decision = decisions.get(toolCallId);
              if (decision && !decision.approved)
                return recordToolCallResult({
                  runId: input.runId,
                  step,
                  toolCallId,
                  childRunId: '',
                  error: decision.refusal,
                });
              const childRunId = uuid4();
              const plan = await planChildRun({
                runId: input.runId,
                childRunId,
                purpose: {
                  toolCall: { step, toolCallId, ...(decision?.arguments ? { arguments: decision.arguments } : {}) },
                },
              });
              // A knowledge base or retriever function is answered by an activity, not a child run.
              if ('retrieval' in plan)
                return long(() => runAssistantRetrieval({ runId: input.runId, step, toolCallId }));
              if (!('error' in plan)) await runChild(plan);
              await recordToolCallResult({
                runId: input.runId,
                step,
                toolCallId,
                childRunId,
                error: 'error' in plan ? plan.error : undefined,
              });
            }),
          );
        }
        return {
          status: 'FAILED',
          reason: 'MaxStepsExceeded',
          error: `The model was still calling functions after ${input.maxSteps} steps (ASSISTANT_MAX_STEPS)`,
        } satisfies RunEnding;
      },
      end,
    );

  try {
    return await withRetries(controlled ? input.retryPolicy : null, {
      attempt,
      retry: async (write) => {
        const retrying = await retryAssistantRun({ runId: input.runId, ...write });
        await slot?.release();
        return retrying;
      },
      finish: async (ending) => {
        const status = await finishAssistantRun({ runId: input.runId, ending });
        await slot?.release();
        return status;
      },
    });
  } finally {
    await slot?.release();
  }
}
