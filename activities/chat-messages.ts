// Activities of the chat message workflow: one model call per exchange. Streamed pieces become
// `ChatMessageDelta` events (griptape DeltaMessage dicts) that the api's stream route sends as they
// arrive; the answer (a griptape Message dict), the usage and the model that answered are written to the
// run row. Only the run id travels through workflow history.
import { ApplicationFailure } from '@temporalio/activity';
import type { ActivityDeps } from './deps';
import { Run, RunStatus, RUN_TERMINAL } from '../src/persistence/entities/run';
import {
  answerMessage,
  CHAT_DELTA_EVENT,
  ChatRequestError,
  deltaMessage,
  ModelAnswerError,
  toCompletionRequest,
  usageDeltaMessage,
  withoutNul,
} from '../src/services/conversations/chat-mapping';
import type { ChatRunInput } from '../src/services/conversations/chat-messages';
import { finishRun, isTerminal, markRunning, markStarting, RunEnding } from '../src/services/code/runs/lifecycle';
import { appendEvents } from '../src/services/code/runs/state';
import { callModel } from './model-call';

export function createChatMessageActivities(deps: ActivityDeps) {
  const { ds } = deps;

  return {
    /** QUEUED → STARTING → RUNNING. False when the exchange is gone or already ended. */
    async startChatMessage(input: { runId: string }): Promise<boolean> {
      const status = await markStarting(ds, input.runId);
      if (status === undefined || isTerminal(status)) return false;
      return markRunning(ds, input.runId, new Date());
    },

    /**
     * Asks the model (streamed when the exchange is) and records the answer on the row. Idempotent: an
     * exchange that has its answer is not asked again. Heartbeats throughout, so a cancel (the stream's
     * client went away) aborts the provider request at once.
     */
    async chatModelCall(input: { runId: string }): Promise<void> {
      const run = await ds.getRepository(Run).findOneBy({ run_id: input.runId, kind: 'chat' });
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
      await ds.transaction(async (em) => {
        // Not a status change: the answer the exchange reports (the workflow's terminal write follows).
        const updated = await em
          .createQueryBuilder()
          .update(Run)
          .set({
            output: message,
            output_timestamp: Date.now() / 1000,
            usage: completion.usage,
            model: completion.model,
            updated_at: new Date(),
          } as object)
          .where('run_id = :id AND status NOT IN (:...terminal)', { id: run.run_id, terminal: RUN_TERMINAL })
          .execute();
        if (stream && updated.affected) {
          await appendEvents(em, run.run_id, [
            { type: CHAT_DELTA_EVENT, origin: 'ASSISTANT', payload: usageDeltaMessage(completion.usage) },
          ]);
        }
      });
    },

    /** The terminal write (FAILED/ERROR/CANCELLED endings carry the message the stream sends as `{error}`). */
    async finishChatMessage(input: { runId: string; ending: RunEnding }): Promise<RunStatus | 'MISSING'> {
      return (await finishRun(ds, input.runId, input.ending)) ?? 'MISSING';
    },
  };
}
