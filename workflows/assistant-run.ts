// The assistant run workflow: STARTING; the assistant's tools described (child tool runs, cached per
// deployment); RUNNING; then model steps: each step asks the model (an activity that streams tokens into
// events and heartbeats), and each function call it makes runs a structure or tool run as a child workflow
// (or, for a knowledge base or retriever function, a retrieval activity) whose result goes back to the model, up to `maxSteps` steps. The time limit is a workflow timer; a
// `cancel` signal or a workflow cancellation (Temporal UI) aborts the model stream and the child runs.
import {
  ChildWorkflowFailure,
  executeChild,
  isCancellation,
  patched,
  proxyActivities,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { ChildRun } from '../activities/assistant-runs';
import type { RunStatus } from '../src/persistence/entities/run';
import type { RunEnding } from '../src/services/code/runs/lifecycle';
import {
  type AssistantRunInput,
  type CodeRunWorkflow,
  startOptionsFor,
  WORKFLOW_TYPES,
} from '../src/temporal/contracts';
import { longActivity, MODEL_FAILED_TYPES, runToEnding, STATUS_WRITES } from './run-scope';

const { startAssistantRun, planChildRun, resolveAssistantTools, recordToolCallResult, finishAssistantRun } =
  proxyActivities<Activities>(STATUS_WRITES);

export async function assistantRunWorkflow(input: AssistantRunInput): Promise<RunStatus | 'MISSING'> {
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
          },
        ],
      });
    } catch (err) {
      // A child that failed as a workflow still has its row (settled by the reconciler); its result is read from there.
      if (!(err instanceof ChildWorkflowFailure) || isCancellation(err)) throw err;
    }
  };

  return runToEnding(
    { timeLimitSeconds: input.timeLimitSeconds, failedTypes: MODEL_FAILED_TYPES },
    async (startTimer) => {
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
        failures: failures.filter((f) => f !== undefined),
      });
      if (setupEnding) return setupEnding;

      for (let step = 1; step <= input.maxSteps; step++) {
        const result = await assistantModelStep({ runId: input.runId, step });
        if (result.kind === 'answer') return { status: 'SUCCEEDED', message: null } satisfies RunEnding;
        await Promise.all(
          result.toolCallIds.map(async (toolCallId) => {
            const childRunId = uuid4();
            const plan = await planChildRun({
              runId: input.runId,
              childRunId,
              purpose: { toolCall: { step, toolCallId } },
            });
            // A knowledge base or retriever function is answered by an activity, not a child run.
            if ('retrieval' in plan) return runAssistantRetrieval({ runId: input.runId, step, toolCallId });
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
    (ending) => finishAssistantRun({ runId: input.runId, ending }),
  );
}
