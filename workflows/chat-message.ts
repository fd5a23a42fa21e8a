// The chat message workflow (id `chat-run-<uuid>`, one per exchange): RUNNING, one model call (an
// activity that streams the answer into events and heartbeats), the terminal write. The time limit
// (CHAT_MESSAGE_TIME_LIMIT_SECONDS) is a workflow timer; a `cancel` signal — the api sends one when the
// client goes away before the answer — or a workflow cancellation aborts the provider request.
import { ActivityCancellationType, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { RunStatus } from '../src/persistence/entities/run';
import type { RunEnding } from '../src/services/run-lifecycle';
import { MODEL_FAILED_TYPES, runToEnding } from './run-scope';

export interface ChatMessageWorkflowInput {
  runId: string;
  /** Snapshot of CHAT_MESSAGE_TIME_LIMIT_SECONDS when the exchange was created. */
  timeLimitSeconds: number;
  heartbeatTimeoutSeconds: number;
}

/** The request could not be mapped (refused by the api already, normally): FAILED like a rejected request. */
const FAILED_TYPES = [...MODEL_FAILED_TYPES, 'InvalidChatRequest'];

const { startChatMessage, finishChatMessage } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

export async function chatMessageWorkflow(input: ChatMessageWorkflowInput): Promise<RunStatus | 'MISSING'> {
  const { chatModelCall } = proxyActivities<Activities>({
    startToCloseTimeout: `${input.timeLimitSeconds + 300} seconds`,
    heartbeatTimeout: `${input.heartbeatTimeoutSeconds} seconds`,
    // The end is recorded only after the provider stream was aborted.
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 3 },
  });
  return runToEnding(
    { timeLimitSeconds: input.timeLimitSeconds, failedTypes: FAILED_TYPES },
    async (startTimer) => {
      if (!(await startChatMessage({ runId: input.runId }))) return undefined;
      startTimer();
      await chatModelCall({ runId: input.runId });
      return { status: 'SUCCEEDED', message: null } satisfies RunEnding;
    },
    (ending) => finishChatMessage({ runId: input.runId, ending }),
  );
}
