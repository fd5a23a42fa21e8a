// The chat message workflow (id `chat-run-<uuid>`, one per exchange): an execution slot of its organization
// (execution-slot.ts: the fair share every kind of work takes; until it has one the message waits QUEUED,
// holding no worker slot), RUNNING, one model call (an activity that streams the answer into events and
// heartbeats), the terminal write, the slot given back. The time limit (CHAT_MESSAGE_TIME_LIMIT_SECONDS, from
// RUNNING on) is a workflow timer; a `cancel` signal — the api sends one when the client goes away before the
// answer — or a workflow cancellation aborts the provider request (or the wait for a slot). Messages started
// before CHAT_MESSAGE_SLOT_PATCH replay without a slot.
import { patched, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { ChatMessageInput, RunEnding, RunStatus } from '../src/temporal/contracts';
import { ExecutionSlot, withSlot } from './execution-slot';
import { longActivity, MODEL_FAILED_TYPES, runToEnding, STATUS_WRITES } from './run-scope';

export const CHAT_MESSAGE_SLOT_PATCH = 'chat-message-slot';

/** The request could not be mapped (refused by the api already, normally): FAILED like a rejected request. */
const FAILED_TYPES = [...MODEL_FAILED_TYPES, 'InvalidChatRequest'];

const { startChatMessage, finishChatMessage } = proxyActivities<Activities>(STATUS_WRITES);

export async function chatMessageWorkflow(input: ChatMessageInput): Promise<RunStatus | 'MISSING'> {
  const { chatModelCall } = proxyActivities<Activities>(
    longActivity(input, { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 3 }),
  );
  const slot = patched(CHAT_MESSAGE_SLOT_PATCH) ? new ExecutionSlot({ kind: 'run', jobId: input.runId }) : undefined;
  return withSlot(
    slot,
    (ending: RunEnding) => finishChatMessage({ runId: input.runId, ending }),
    (finish) =>
      runToEnding(
        { timeLimitSeconds: input.timeLimitSeconds, failedTypes: FAILED_TYPES },
        async (startTimer) => {
          if (slot && !(await slot.acquire())) return undefined;
          if (!(await startChatMessage({ runId: input.runId, timeLimitSeconds: input.timeLimitSeconds })))
            return undefined;
          startTimer();
          await chatModelCall({ runId: input.runId });
          return { status: 'SUCCEEDED', message: null } satisfies RunEnding;
        },
        finish,
      ),
  );
}
