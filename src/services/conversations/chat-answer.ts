// The worker's side of a chat message (workflows/chat-message.ts): the exchange it answers, and the answer
// written on the row (with, for a streamed exchange, the usage as a last delta). The model call itself
// streams and heartbeats in the activity.
import type { DataSource } from 'typeorm';
import type { Completion } from '../../drivers/model/types';
import { Run, RUN_TERMINAL } from '../../persistence/entities/run';
import { appendEvents } from '../code/runs/state';
import { CHAT_DELTA_EVENT, usageDeltaMessage } from './chat-mapping';

export const findChatRun = (ds: DataSource, runId: string) =>
  ds.getRepository(Run).findOneBy({ run_id: runId, kind: 'chat' });

/** The answer (a griptape Message dict), the usage and the model go on the row, unless the exchange ended. */
export async function recordChatAnswer(
  ds: DataSource,
  runId: string,
  message: unknown,
  completion: Completion,
  stream: boolean,
): Promise<void> {
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
      .where('run_id = :id AND status NOT IN (:...terminal)', { id: runId, terminal: RUN_TERMINAL })
      .execute();
    if (stream && updated.affected) {
      await appendEvents(em, runId, [
        { type: CHAT_DELTA_EVENT, origin: 'ASSISTANT', payload: usageDeltaMessage(completion.usage) },
      ]);
    }
  });
}
