// The work of an integration delivery (workflows/integration-delivery.ts): its terminal write through the
// guarded status writer (./deliveries.ts, which also has its start), and what it starts: runs of the linked
// structures and assistants for a chat message or a code host event, or the deployments a push asks for.
// Idempotent: run ids derive from the delivery, deployments are reused. Answers go back by ./chat-answers.ts.
import type { Client } from '@temporalio/client';
import type { DataSource } from 'typeorm';
import type { Config } from '../../config';
import type { Logger } from '../../logger';
import { CodeResource, Integration, IntegrationDelivery } from '../../persistence/entities';
import type { DeliveryError, DeliveryStatus } from '../../persistence/entities/integration';
import type { SecretBox } from '../../security/secret-box';
import { requestDeployment } from '../code/deployments';
import type { Caller } from '../caller';
import { botIdentity, ChatappError, readChatappDelivery, threadFor } from './chatapp';
import { CodehostAppError, follows, installationToken, readPush } from './codehost-app';
import { recordStarted, threeArgs, transitionDelivery } from './deliveries';
import { secretValue } from './handler';
import { integrationCaller, startAssistantRuns, startStructureRuns } from './targets';
import type { DeliveryEnding } from '../../temporal/contracts';

export type { DeliveryEnding };

export interface DeliveryDeps {
  ds: DataSource;
  temporal: Client;
  config: Config;
  box: SecretBox;
  log: Logger;
}

/** What the workflow does next: wait for these assistant runs and post their answers (chatapp messages). */
export interface DeliveryWork {
  assistantRunIds: string[];
  reply: boolean;
}

const NO_WORK: DeliveryWork = { assistantRunIds: [], reply: false };

/**
 * A provider could not be reached (`retryable`: the step is tried again) or refused what the delivery cannot
 * go on without; `type` names it as the workflow sees it (ProviderUnavailable, InstallationTokenRefused).
 */
export class DeliveryStepFailure extends Error {
  constructor(
    message: string,
    readonly type: 'ProviderUnavailable' | 'InstallationTokenRefused',
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

/** A provider error that is worth another attempt, as the step's failure. */
export const providerUnavailable = (err: ChatappError | CodehostAppError) =>
  err.retryable ? new DeliveryStepFailure(err.message, 'ProviderUnavailable', true) : undefined;

/** The delivery and its integration; undefined when either is gone. */
export async function loadDelivery(ds: DataSource, deliveryId: string) {
  const delivery = await ds.getRepository(IntegrationDelivery).findOneBy({ delivery_id: deliveryId });
  const integration =
    delivery && (await ds.getRepository(Integration).findOneBy({ integration_id: delivery.integration_id }));
  return delivery && integration ? { delivery, integration } : undefined;
}

/** Text for the model: a mention of the bot (`<@U123>`) is addressing, not content. */
const withoutMention = (text: string, botUserId?: string) =>
  (botUserId ? text.split(`<@${botUserId}>`).join('') : text).trim();

/** Starts what the delivery asks for; throws DeliveryStepFailure when a provider stops it. */
export async function startDeliveryWork(deps: DeliveryDeps, deliveryId: string): Promise<DeliveryWork> {
  const loaded = await loadDelivery(deps.ds, deliveryId);
  if (!loaded?.delivery.payload) return NO_WORK;
  const { delivery, integration } = loaded;
  const caller = integrationCaller(integration);
  if (integration.type === 'chatapp') return startChatMessageWork(deps, caller, integration, delivery);
  if (delivery.event !== 'push') {
    // codehost_app: events other than a push run the linked structures.
    const structures = await startStructureRuns(
      deps,
      caller,
      integration,
      delivery.delivery_id,
      threeArgs(delivery.payload!),
    );
    await recordStarted(
      deps.ds,
      delivery.delivery_id,
      { structure_run_ids: structures.structure_run_ids },
      structures.errors,
    );
    return NO_WORK;
  }
  await deployPush(deps, caller, integration, delivery);
  return NO_WORK;
}

/** A chat message: the linked structures run with the three arguments, the assistants answer in its thread. */
async function startChatMessageWork(
  deps: DeliveryDeps,
  caller: Caller,
  integration: Integration,
  delivery: IntegrationDelivery,
): Promise<DeliveryWork> {
  const { ds, box, config } = deps;
  const payload = delivery.payload!;
  const parsed = readChatappDelivery(payload.raw_body, payload.headers['content-type'] ?? '');
  if (parsed?.kind !== 'message') return NO_WORK;
  // Who the bot is (auth.test): its own messages are never answered (a loop), whatever the event says.
  const token = await secretValue(ds, box, integration.organization_id, integration.config.bot_token_secret_ref);
  let botUserId: string | undefined;
  try {
    if (!token) throw new ChatappError('The bot token secret is not set', false);
    botUserId = (await botIdentity(config.integrations.chatappApiBaseUrl, token)).userId;
  } catch (err) {
    if (!(err instanceof ChatappError)) throw err;
    const again = providerUnavailable(err);
    if (again) throw again;
    await recordStarted(ds, delivery.delivery_id, {}, [{ type: 'ChatappRefused', message: err.message }]);
  }
  if (botUserId && parsed.message.user === botUserId) {
    await recordStarted(ds, delivery.delivery_id, {}, [
      { type: 'OwnMessage', message: "The app's own message: not answered" },
    ]);
    return NO_WORK;
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
    deps,
    caller,
    integration,
    delivery.delivery_id,
    threeArgs(payload),
    envVars,
  );
  const threadId = integration.assistant_ids.length ? await threadFor(ds, integration, parsed.message) : undefined;
  const assistants = await startAssistantRuns(
    deps,
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

/** A push deploys the linked structures that follow its branch (with an installation token when the app has one). */
async function deployPush(
  deps: DeliveryDeps,
  caller: Caller,
  integration: Integration,
  delivery: IntegrationDelivery,
): Promise<void> {
  const { ds, box, config } = deps;
  const push = readPush(JSON.parse(delivery.payload!.raw_body));
  if (!push) return;
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
      const key = await secretValue(ds, box, integration.organization_id, integration.config.private_key_secret_ref);
      if (!integration.config.app_id || !key) throw new CodehostAppError('The app id or private key is not set', false);
      token = await installationToken(
        config.integrations.codehostApiBaseUrl,
        integration.config.app_id,
        key,
        push.installationId,
      );
    } catch (err) {
      if (!(err instanceof CodehostAppError)) throw err;
      throw providerUnavailable(err) ?? new DeliveryStepFailure(err.message, 'InstallationTokenRefused', false);
    }
  }
  for (const structure of following) {
    const { deployment } = await requestDeployment(deps, caller, structure, {
      code_source: { codehost: { commit_sha: push.commitSha, ...(token ? { access_token: token } : {}) } },
    });
    deploymentIds.push(deployment.deployment_id);
  }
  if (!following.length) {
    errors.push({
      type: 'NothingToDeploy',
      message: `No linked structure follows ${push.owner}/${push.name} branch ${push.branch}`,
    });
  }
  await recordStarted(ds, delivery.delivery_id, { deployment_ids: deploymentIds }, errors);
}
