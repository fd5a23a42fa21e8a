// Activities of the chat message workflow: one model call per exchange. Streamed pieces become
// `ChatMessageDelta` events (griptape DeltaMessage dicts) that the api's stream route sends as they
// arrive; the answer (a griptape Message dict), the usage and the model that answered are written to the
// run row. Only the run id travels through workflow history.
import { ApplicationFailure } from '@temporalio/activity';
import type { ActivityDeps } from './deps';
import type { RunStatus } from '../src/persistence/entities/run';
import {
  answerMessage,
  CHAT_DELTA_EVENT,
  ChatRequestError,
  deltaMessage,
  ModelAnswerError,
  toCompletionRequest,
  withoutNul,
} from '../src/services/conversations/chat-mapping';
import type { ChatRunInput } from '../src/services/conversations/chat-messages';
import { finishRun, isTerminal, markRunning, markStarting } from '../src/services/code/runs/lifecycle';
import type { RunEnding } from '../src/temporal/contracts';
import { findChatRun, recordChatAnswer } from '../src/services/conversations/chat-answer';
import { callModel } from './model-call';
import { recordedLimits } from '../src/services/code/runs/limits';

export function createChatMessageActivities(deps: ActivityDeps) {
  const { ds } = deps;

  return {
    /** QUEUED → STARTING → RUNNING. False when the exchange is gone or already ended. */
    async startChatMessage(input: { runId: string; timeLimitSeconds?: number }): Promise<boolean> {
      const status = await markStarting(ds, input.runId);
      if (status === undefined || isTerminal(status)) return false;
      // Workflows started before the time limit was passed here record no limits.
      const limits =
        input.timeLimitSeconds === undefined ? undefined : recordedLimits(deps.config, 'chat', input.timeLimitSeconds);
      return markRunning(ds, input.runId, new Date(), undefined, limits);
    },

    /**
     * Asks the model (streamed when the exchange is) and records the answer on the row. Idempotent: an
     * exchange that has its answer is not asked again. Heartbeats throughout, so a cancel (the stream's
     * client went away) aborts the provider request at once.
     */
    async chatModelCall(input: { runId: string }): Promise<void> {
      const run = await findChatRun(ds, input.runId);
      if (!run || isTerminal(run.status))
        throw ApplicationFailure.nonRetryable('The exchange already ended', 'AlreadyEnded');
      if (run.output != null) return;
      const { stream, request } = run.input as ChatRunInput;
      let mapped: ReturnType<typeof toCompletionRequest>;
      try {
        mapped = toCompletionRequest(request, stream);
      } catch (err) {
        // The api validated the request with the same mapping; only a changed mapping gets here.
        if (err instanceof ChatRequestError) throw ApplicationFailure.nonRetryable(err.message, 'InvalidChatRequest');
        throw err;
      }
      const { toolNames, ...completionRequest } = mapped;
      const completion = await callModel(deps, run.run_id, completionRequest, (delta) => [
        { type: CHAT_DELTA_EVENT, origin: 'ASSISTANT', payload: withoutNul(deltaMessage(delta, toolNames)) },
      ]);
      let message: ReturnType<typeof answerMessage>;
      try {
        message = withoutNul(answerMessage(completion, toolNames));
      } catch (err) {
        if (err instanceof ModelAnswerError) throw ApplicationFailure.nonRetryable(err.message, 'InvalidModelAnswer');
        throw err;
      }
      await recordChatAnswer(ds, run.run_id, message, completion, stream);
    },

    /** The terminal write (FAILED/ERROR/CANCELLED endings carry the message the stream sends as `{error}`). */
    async finishChatMessage(input: { runId: string; ending: RunEnding }): Promise<RunStatus | 'MISSING'> {
      return (await finishRun(ds, input.runId, input.ending)) ?? 'MISSING';
    },
  };
}
