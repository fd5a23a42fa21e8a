// Activities of the integration delivery workflow (integration-delivery-<uuid>): the guarded status writes, the
// start of what the delivery asks for (runs of the linked structures and assistants, or the deployments a
// push asks for), waiting for the assistants (heartbeating), and posting their answers to the chat app.
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import type { ActivityDeps } from './deps';
import { CodeResource, Integration, IntegrationDelivery, Run } from '../src/persistence/entities';
import type { DeliveryError, DeliveryStatus } from '../src/persistence/entities/integration';
import { RUN_TERMINAL } from '../src/persistence/entities/run';
import { resultText } from '../src/services/assistants/prompt';
import { requestDeployment } from '../src/services/code/deployments';
import {
  botIdentity,
  ChatappError,
  postMessage,
  readChatappDelivery,
  threadFor,
} from '../src/services/integrations/chatapp';
import { CodehostAppError, follows, installationToken, readPush } from '../src/services/integrations/codehost-app';
import { recordStarted, threeArgs, transitionDelivery } from '../src/services/integrations/deliveries';
import { secretValue } from '../src/services/integrations/handler';
import { integrationCaller, startAssistantRuns, startStructureRuns } from '../src/services/integrations/targets';

export interface DeliveryEnding {
  status: Exclude<DeliveryStatus, 'QUEUED' | 'RUNNING'>;
  reason?: string;
  message?: string;
  requestedBy?: string;
}

/** What the workflow does next: wait for these assistant runs and post their answers (chatapp messages). */
export interface DeliveryWork {
  assistantRunIds: string[];
  reply: boolean;
}

/** Text for the model: a mention of the bot (`<@U123>`) is addressing, not content. */
const withoutMention = (text: string, botUserId?: string) =>
  (botUserId ? text.split(`<@${botUserId}>`).join('') : text).trim();

export function createIntegrationActivities(deps: ActivityDeps) {
  const { ds, box, config, log } = deps;

  async function load(deliveryId: string) {
    const delivery = await ds.getRepository(IntegrationDelivery).findOneBy({ delivery_id: deliveryId });
    const integration =
      delivery && (await ds.getRepository(Integration).findOneBy({ integration_id: delivery.integration_id }));
    return delivery && integration ? { delivery, integration } : undefined;
  }

  const retryable = (err: Error & { retryable?: boolean }) =>
    err.retryable ? ApplicationFailure.retryable(err.message, 'ProviderUnavailable') : undefined;

  return {
    /** QUEUED → RUNNING; false when the delivery is gone (its integration deleted) or already ended. */
    async startIntegrationDelivery(input: { deliveryId: string }): Promise<boolean> {
      await transitionDelivery(ds, input.deliveryId, 'RUNNING');
      const d = await ds.getRepository(IntegrationDelivery).findOneBy({ delivery_id: input.deliveryId });
      return d?.status === 'RUNNING';
    },

    /** Starts what the delivery asks for (idempotent: run ids derive from the delivery, deployments are reused). */
    async startDeliveryWork(input: { deliveryId: string }): Promise<DeliveryWork> {
      const loaded = await load(input.deliveryId);
      if (!loaded?.delivery.payload) return { assistantRunIds: [], reply: false };
      const { delivery, integration } = loaded;
      const payload = delivery.payload!;
      const caller = integrationCaller(integration);
      const runDeps = { ds, temporal: deps.temporal, config };

      if (integration.type === 'chatapp') {
        const parsed = readChatappDelivery(payload.raw_body, payload.headers['content-type'] ?? '');
        if (parsed?.kind !== 'message') return { assistantRunIds: [], reply: false };
        // Who the bot is (auth.test): its own messages are never answered (a loop), whatever the event says.
        const token = await secretValue(ds, box, integration.organization_id, integration.config.bot_token_secret_ref);
        let botUserId: string | undefined;
        try {
          if (!token) throw new ChatappError('The bot token secret is not set', false);
          botUserId = (await botIdentity(config.integrations.chatappApiBaseUrl, token)).userId;
        } catch (err) {
          if (!(err instanceof ChatappError)) throw err;
          const again = retryable(err);
          if (again) throw again;
          await recordStarted(ds, delivery.delivery_id, {}, [{ type: 'ChatappRefused', message: err.message }]);
        }
        if (botUserId && parsed.message.user === botUserId) {
          await recordStarted(ds, delivery.delivery_id, {}, [
            { type: 'OwnMessage', message: "The app's own message: not answered" },
          ]);
          return { assistantRunIds: [], reply: false };
        }
        // Structures see the chat app's credentials as the env vars its SDKs read (resolved at run start).
        const envVars = [
          { name: 'SLACK_BOT_TOKEN', value: integration.config.bot_token_secret_ref!, source: 'secret_ref' as const },
          {
            name: 'SLACK_SIGNING_SECRET',
            value: integration.config.signing_secret_secret_ref!,
            source: 'secret_ref' as const,
          },
        ];
        const structures = await startStructureRuns(
          runDeps,
          caller,
          integration,
          delivery.delivery_id,
          threeArgs(payload),
          envVars,
        );
        const threadId = integration.assistant_ids.length
          ? await threadFor(ds, integration, parsed.message)
          : undefined;
        const assistants = await startAssistantRuns(
          runDeps,
          caller,
          integration,
          delivery.delivery_id,
          withoutMention(parsed.message.text, botUserId) || parsed.message.text,
          threadId,
        );
        await recordStarted(
          ds,
          delivery.delivery_id,
          { structure_run_ids: structures.structure_run_ids, assistant_run_ids: assistants.assistant_run_ids },
          [...structures.errors, ...assistants.errors],
        );
        return { assistantRunIds: assistants.assistant_run_ids, reply: true };
      }

      // codehost_app: a push deploys the linked structures that follow its branch; other events run them.
      const push = delivery.event === 'push' ? readPush(JSON.parse(payload.raw_body)) : undefined;
      if (delivery.event !== 'push') {
        const structures = await startStructureRuns(
          runDeps,
          caller,
          integration,
          delivery.delivery_id,
          threeArgs(payload),
        );
        await recordStarted(
          ds,
          delivery.delivery_id,
          { structure_run_ids: structures.structure_run_ids },
          structures.errors,
        );
        return { assistantRunIds: [], reply: false };
      }
      if (!push) return { assistantRunIds: [], reply: false };
      const linked = integration.structure_ids.length
        ? await ds
            .getRepository(CodeResource)
            .createQueryBuilder('r')
            .where('r.resource_id IN (:...ids) AND r.organization_id = :org AND r.kind = :kind', {
              ids: integration.structure_ids,
              org: integration.organization_id,
              kind: 'structure',
            })
            .getMany()
        : [];
      const following = linked.filter((s) => follows(s, push));
      const errors: DeliveryError[] = [];
      const deploymentIds: string[] = [];
      let token: string | undefined;
      if (following.length && push.installationId !== undefined) {
        try {
          const key = await secretValue(
            ds,
            box,
            integration.organization_id,
            integration.config.private_key_secret_ref,
          );
          if (!integration.config.app_id || !key)
            throw new CodehostAppError('The app id or private key is not set', false);
          token = await installationToken(
            config.integrations.codehostApiBaseUrl,
            integration.config.app_id,
            key,
            push.installationId,
          );
        } catch (err) {
          if (!(err instanceof CodehostAppError)) throw err;
          throw retryable(err) ?? ApplicationFailure.nonRetryable(err.message, 'InstallationTokenRefused');
        }
      }
      for (const structure of following) {
        const { deployment } = await requestDeployment(
          { ds, temporal: deps.temporal, config, box },
          caller,
          structure,
          {
            code_source: { codehost: { commit_sha: push.commitSha, ...(token ? { access_token: token } : {}) } },
          },
        );
        deploymentIds.push(deployment.deployment_id);
      }
      if (!following.length) {
        errors.push({
          type: 'NothingToDeploy',
          message: `No linked structure follows ${push.owner}/${push.name} branch ${push.branch}`,
        });
      }
      await recordStarted(ds, delivery.delivery_id, { deployment_ids: deploymentIds }, errors);
      return { assistantRunIds: [], reply: false };
    },

    /** Waits (heartbeating) until every run has ended; a cancel stops the wait, not the runs. */
    async awaitAssistantRuns(input: { runIds: string[] }): Promise<void> {
      const ctx = Context.current();
      for (;;) {
        ctx.heartbeat();
        const open = await ds.query(
          `SELECT 1 FROM runs WHERE run_id = ANY($1::uuid[]) AND NOT (status = ANY($2::text[])) LIMIT 1`,
          [input.runIds, RUN_TERMINAL],
        );
        if (!open.length) return;
        if (ctx.cancellationSignal.aborted) throw ctx.cancellationSignal.reason ?? new CancelledFailure('cancelled');
        await ctx.sleep(500);
      }
    },

    /** Posts each assistant's answer in the message's thread with the bot token (each answer once). */
    async postChatAnswers(input: { deliveryId: string }): Promise<void> {
      const loaded = await load(input.deliveryId);
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
          const again = retryable(err);
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
    },

    /** The terminal write (guarded); answers the delivery's status. */
    async finishIntegrationDelivery(input: {
      deliveryId: string;
      ending: DeliveryEnding;
    }): Promise<DeliveryStatus | 'MISSING'> {
      const { ending } = input;
      const current = await ds.getRepository(IntegrationDelivery).findOneBy({ delivery_id: input.deliveryId });
      await transitionDelivery(ds, input.deliveryId, ending.status, {
        ...(current?.status_detail ?? {}),
        ...(ending.reason ? { reason: ending.reason } : {}),
        ...(ending.message ? { message: ending.message } : {}),
        ...(ending.requestedBy ? { requested_by: ending.requestedBy } : {}),
      });
      const d = await ds.getRepository(IntegrationDelivery).findOneBy({ delivery_id: input.deliveryId });
      return d?.status ?? 'MISSING';
    },
  };
}
