// Activities of the assistant run workflow: thin adapters over src/services/assistants/ (child runs, run
// steps, transcript), where the rules and the writes live. Only small facts (ids, step results) travel
// through workflow history. The model call streams and heartbeats here (./model-call.ts), so a cancel
// aborts the provider request at once.
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { ActivityDeps } from './deps';
import type { RunStatus } from '../src/persistence/entities/run';
import { isTerminal, markStarting } from '../src/services/code/runs/lifecycle';
import type { RunEnding, RunRetryInput } from '../src/temporal/contracts';
import {
  planChildRun,
  toolsToDescribe,
  type ChildRunPlan,
  type ChildRunPurpose,
} from '../src/services/assistants/child-runs';
import {
  finishAssistantRun,
  markAssistantRetrying,
  modelRequest,
  recordedTurn,
  recordModelTurn,
  recordToolCallResult,
  resolveAssistantTools,
  stepResultOf,
  type ModelStepResult,
} from '../src/services/assistants/run-steps';
import { chunkEvent } from '../src/services/assistants/run-events';
import { loadAssistantRun } from '../src/services/assistants/transcript';
import { callModel } from './model-call';
import {
  openToolApproval,
  settleToolApproval,
  type ApprovalDecision,
  type OpenedApproval,
} from '../src/services/waitpoints/tool-approvals';
import { APPROVAL_NOTIFY_ATTEMPTS, type WaitpointCompletedSignal } from '../src/temporal/contracts';
import { notifyApproval } from '../src/services/waitpoints/notifications';
import { outboundPolicyFor } from '../src/security/outbound-policy';
import { recordedLimits } from '../src/services/code/runs/limits';

export function createAssistantRunActivities(deps: ActivityDeps) {
  const { ds } = deps;

  return {
    /** QUEUED → STARTING; which tools still need describing. Undefined when the run is gone or ended. */
    async startAssistantRun(input: { runId: string }): Promise<{ toolsToDescribe: string[] } | undefined> {
      const status = await markStarting(ds, input.runId);
      if (status === undefined || isTerminal(status)) return undefined;
      const missing = await toolsToDescribe(ds, input.runId);
      return missing && { toolsToDescribe: missing };
    },

    /** Inserts the row of a child run (a tool's describe run, or a function call's run), or says why there is none. */
    async planChildRun(input: { runId: string; childRunId: string; purpose: ChildRunPurpose }): Promise<ChildRunPlan> {
      return planChildRun(ds, input);
    },

    /** The functions offered to the model, then → RUNNING. An ending when a tool could not be described. */
    async resolveAssistantTools(input: {
      runId: string;
      /** Absent in workflows started before it was passed: no limits are recorded then. */
      timeLimitSeconds?: number;
      failures: Array<{ toolId: string; error: string }>;
    }): Promise<RunEnding | undefined> {
      const loaded = await loadAssistantRun(ds, input.runId);
      if (!loaded) return { status: 'ERROR', reason: 'AlreadyEnded', error: 'The run no longer exists' };
      const limits =
        input.timeLimitSeconds === undefined
          ? undefined
          : recordedLimits(deps.config, 'assistant', input.timeLimitSeconds);
      return resolveAssistantTools(ds, loaded, input.failures, limits);
    },

    /**
     * One model call (streamed tokens become TextChunkEvent / ActionChunkEvent events); its turn joins the
     * transcript and a final answer becomes the run's output. Idempotent per step. Heartbeats throughout.
     */
    async assistantModelStep(input: { runId: string; step: number }): Promise<ModelStepResult> {
      const loaded = await loadAssistantRun(ds, input.runId);
      if (!loaded || isTerminal(loaded.run.status))
        throw ApplicationFailure.nonRetryable('The run already ended', 'AlreadyEnded');
      const recorded = recordedTurn(loaded, input.step);
      if (recorded) return stepResultOf(recorded, loaded.details.tool_definitions);
      const request = await modelRequest(ds, loaded);
      const completion = await callModel(deps, loaded.run.run_id, request, (delta) => [chunkEvent(delta)]);
      return recordModelTurn(ds, loaded.run, input.step, completion, loaded.details.tool_definitions);
    },

    /** The result of one function call (a child run, or why there was none) joins the transcript. Idempotent. */
    async recordToolCallResult(input: {
      runId: string;
      step: number;
      toolCallId: string;
      childRunId: string;
      error?: string;
    }): Promise<void> {
      await recordToolCallResult(ds, input);
    },

    /**
     * The run's attempt `attempt` ended with `ending`, which its retry policy retries: back to QUEUED as the next
     * attempt with a RunRetrying event, its conversation cleared (the next attempt asks the model afresh; the
     * events stay). Idempotent; false when the run ended meanwhile.
     */
    async retryAssistantRun(input: RunRetryInput): Promise<boolean> {
      return markAssistantRetrying(ds, input);
    },

    /** Opens the waitpoint of a call whose tool requires approval (null when it needs none). Idempotent. */
    async openToolApproval(input: {
      runId: string;
      step: number;
      toolCallId: string;
      waitpointId: string;
    }): Promise<OpenedApproval | null> {
      return openToolApproval(ds, deps.config.approvalTimeoutSeconds, input);
    },

    /** Settles a waitpoint as its completion said, or TIMED_OUT without one; what to do with the call. Idempotent. */
    async settleToolApproval(input: {
      runId: string;
      waitpointId: string;
      completion: WaitpointCompletedSignal | null;
    }): Promise<ApprovalDecision> {
      return settleToolApproval(ds, input);
    },

    /**
     * Posts a waitpoint to its tool's approval webhook, signed; throws to be retried when the webhook does not take
     * it, and on the last attempt records that it could not (the run waits all the same).
     */
    async notifyApproval(input: { runId: string; waitpointId: string }): Promise<void> {
      const ctx = Context.current();
      const notify = {
        ds,
        box: deps.box,
        policy: outboundPolicyFor(deps.config),
        publicBaseUrl: deps.config.publicBaseUrl,
      };
      await notifyApproval(notify, input, {
        last: ctx.info.attempt >= APPROVAL_NOTIFY_ATTEMPTS,
        signal: ctx.cancellationSignal,
      });
    },

    /** The terminal write (SUCCEEDED: the assistant's finish event and the thread's new exchange with it). */
    async finishAssistantRun(input: { runId: string; ending: RunEnding }): Promise<RunStatus | 'MISSING'> {
      return finishAssistantRun(ds, input.runId, input.ending);
    },
  };
}
