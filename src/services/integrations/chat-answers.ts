// The answers of a chat message's assistants, posted back in the message's thread with the bot token, each
// once (the posted run ids are kept in the delivery's status detail), once every run has ended.
import type { DataSource } from 'typeorm';
import { Run } from '../../persistence/entities';
import { RUN_TERMINAL } from '../../persistence/entities/run';
import { resultText } from '../assistants/prompt';
import { ChatappError, postMessage, readChatappDelivery } from './chatapp';
import { recordStarted } from './deliveries';
import { loadDelivery, providerUnavailable, type DeliveryDeps } from './delivery-work';
import { secretValue } from './handler';

/**
 * Posts each assistant's answer (or why there is none) in the message's thread; a refusal is recorded on
 * the delivery, an unreachable chat app throws DeliveryStepFailure (the step is tried again).
 */
export async function postChatAnswers(deps: DeliveryDeps, deliveryId: string): Promise<void> {
  const { ds, box, config, log } = deps;
  const loaded = await loadDelivery(ds, deliveryId);
  if (!loaded?.delivery.payload) return;
  const { delivery, integration } = loaded;
  const parsed = readChatappDelivery(delivery.payload!.raw_body, delivery.payload!.headers['content-type'] ?? '');
  if (parsed?.kind !== 'message') return;
  const token = await secretValue(ds, box, integration.organization_id, integration.config.bot_token_secret_ref);
  const posted = new Set(((delivery.status_detail ?? {}) as { posted?: string[] }).posted ?? []);
  for (const runId of delivery.assistant_run_ids) {
    if (posted.has(runId)) continue;
    const run = await ds.getRepository(Run).findOneBy({ run_id: runId });
    if (!run) continue;
    const text =
      run.status === 'SUCCEEDED'
        ? resultText(run.output)
        : `The assistant could not answer (its run ended ${run.status}).`;
    try {
      if (!token) throw new ChatappError('The bot token secret is not set', false);
      await postMessage(config.integrations.chatappApiBaseUrl, token, {
        channel: parsed.message.channel,
        text,
        threadTs: parsed.message.threadTs,
      });
    } catch (err) {
      if (!(err instanceof ChatappError)) throw err;
      const again = providerUnavailable(err);
      if (again) throw again;
      log.warn({ deliveryId: delivery.delivery_id, err: err.message }, 'chat app refused an answer');
      await recordStarted(ds, delivery.delivery_id, {}, [
        { type: 'PostFailed', message: err.message, target: `assistant run ${runId}` },
      ]);
    }
    posted.add(runId);
    await ds.query(
      `UPDATE integration_deliveries SET status_detail = COALESCE(status_detail, '{}'::jsonb) || $2::jsonb WHERE delivery_id = $1`,
      [delivery.delivery_id, JSON.stringify({ posted: [...posted] })],
    );
  }
}
