// The activity that answers an assistant's knowledge base or retriever function call
// (src/services/assistants/retrieval-calls.ts): it heartbeats while the provider embeds (or reranks), so a
// cancel aborts the call at once.
import type { ActivityDeps } from './deps';
import { outboundPolicyFor } from '../src/security/outbound-policy';
import { answerRetrievalCall } from '../src/services/assistants/retrieval-calls';
import { withHeartbeats } from './heartbeat';

export function createAssistantRetrievalActivities({ ds, models, box, config }: ActivityDeps) {
  const stores = { ds, box, outbound: outboundPolicyFor(config) };
  return {
    /** Answers one retrieval function call of step `step`: transcript entry and events, once (idempotent). */
    async runAssistantRetrieval(input: { runId: string; step: number; toolCallId: string }): Promise<void> {
      await withHeartbeats((_beat, signal) => answerRetrievalCall(stores, models, input, signal));
    },
  };
}
