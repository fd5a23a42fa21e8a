// The chat message workflow (id `chat-run-<uuid>`, one per exchange): RUNNING, one model call (an
// activity that streams the answer into events and heartbeats), the terminal write. The time limit
// (CHAT_MESSAGE_TIME_LIMIT_SECONDS) is a workflow timer; a `cancel` signal — the api sends one when the
// client goes away before the answer — or a workflow cancellation aborts the provider request.
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { ChatMessageInput, RunEnding, RunStatus } from '../src/temporal/contracts';
import { longActivity, MODEL_FAILED_TYPES, runToEnding, STATUS_WRITES } from './run-scope';

/** The request could not be mapped (refused by the api already, normally): FAILED like a rejected request. */
const FAILED_TYPES = [...MODEL_FAILED_TYPES, 'InvalidChatRequest'];

const { startChatMessage, finishChatMessage } = proxyActivities<Activities>(STATUS_WRITES);

export async function chatMessageWorkflow(input: ChatMessageInput): Promise<RunStatus | 'MISSING'> {
  const { chatModelCall } = proxyActivities<Activities>(
    longActivity(input, { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 3 }),
  );
  return runToEnding(
    { timeLimitSeconds: input.timeLimitSeconds, failedTypes: FAILED_TYPES },
    async (startTimer) => {
      if (!(await startChatMessage({ runId: input.runId, timeLimitSeconds: input.timeLimitSeconds }))) return undefined;
      startTimer();
      await chatModelCall({ runId: input.runId });
      return { status: 'SUCCEEDED', message: null } satisfies RunEnding;
    },
    (ending) => finishChatMessage({ runId: input.runId, ending }),
  );
}
