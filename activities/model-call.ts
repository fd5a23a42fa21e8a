// One model call from inside an activity, shared by assistant runs and chat messages: it heartbeats while
// the provider works (so a cancel reaches it within a second and aborts the provider's stream), streamed
// deltas become run events written in batches (RunEventWriter: tokens never pass through workflow
// history), and failures become the ApplicationFailure types the workflows turn into run endings
// (MODEL_FAILED_TYPES in workflows/run-scope.ts).
import { ApplicationFailure, Context } from '@temporalio/activity';
import { ApplicationFailureCategory } from '@temporalio/common';
import type { ActivityDeps } from './deps';
import { Completion, CompletionDelta, CompletionRequest, ModelError, ModelErrorKind } from '../src/drivers/model/types';
import { RunEventWriter } from '../src/services/code/runs/event-writer';
import type { NewEvent } from '../src/services/code/runs/state';
import { withHeartbeats } from './heartbeat';

/** ApplicationFailure type per ModelError kind; MODEL_FAILED_TYPES (workflows/run-scope.ts) decides FAILED or ERROR from it. */
export const MODEL_FAILURE_TYPE: Record<ModelErrorKind, string> = {
  'not-configured': 'ModelNotConfigured',
  rejected: 'ModelRequestRejected',
  unreachable: 'ModelUnreachable',
};

/**
 * Calls the model for run `runId` with the activity's cancellation signal; each streamed delta becomes the
 * events `eventsOf(delta)` returns, all committed before this returns. An attempt that follows one which had
 * already streamed is refused (ModelStreamInterrupted): a client has seen part of that answer, and a second
 * answer would not continue it.
 */
export async function callModel(
  deps: ActivityDeps,
  runId: string,
  request: Omit<CompletionRequest, 'signal'>,
  eventsOf: (delta: CompletionDelta) => NewEvent[],
): Promise<Completion> {
  const ctx = Context.current();
  if ((ctx.info.heartbeatDetails as { streamed?: boolean } | undefined)?.streamed) {
    throw ApplicationFailure.nonRetryable(
      'The model stream was interrupted after part of the answer had been sent (its worker stopped); the run was not restarted',
      'ModelStreamInterrupted',
    );
  }
  let streamed = false;
  const events = new RunEventWriter(deps.ds, runId);
  try {
    return await withHeartbeats(
      async (beat, signal) => {
        try {
          const completion = await deps.models.complete({ ...request, signal }, (delta) => {
            if (!streamed) {
              streamed = true;
              beat();
            }
            for (const event of eventsOf(delta)) events.push(event);
          });
          await events.drain();
          return completion;
        } catch (err) {
          await events.drain().catch(() => undefined);
          throw err;
        }
      },
      { details: () => ({ streamed }) },
    );
  } catch (err) {
    if (ctx.cancellationSignal.aborted) throw err;
    if (err instanceof ModelError) {
      // Benign: an expected outcome the run records, not a worker problem to log as one.
      throw ApplicationFailure.create({
        message: err.message,
        type: MODEL_FAILURE_TYPE[err.kind],
        nonRetryable: true,
        category: ApplicationFailureCategory.BENIGN,
      });
    }
    deps.log.warn({ err, runId }, 'model call failed');
    throw err;
  }
}
