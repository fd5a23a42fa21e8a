// The public handler of an integration, POST /api/integrations/{id}/handler: the api side of a delivery.
// In order: the integration (404), the rate limit (429), then per type the credential or signature and the
// body (413 over INTEGRATION_MAX_BODY_BYTES, 401 bad signature or replay, 403 `?api_key=` when disabled).
// Every hit of an existing integration is recorded with its verdict; nothing starts on a refused one.
//   webhook       starts the linked structures and assistants here and answers their ids;
//   chatapp       answers URL verification itself; a message is queued for its delivery workflow, which
//                 runs the assistants and posts their answers (the chat app wants an answer within 3 s);
//   codehost_app  queues the event for its delivery workflow (a push deploys the structures that follow
//                 its branch; other events run the linked structures).
import type { IncomingHttpHeaders } from 'node:http';
import type { DataSource } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import type { Caller } from '../caller';
import {
  badRequest,
  forbidden,
  HttpError,
  notFound,
  payloadTooLarge,
  tooManyRequests,
  unauthorized,
} from '../../errors';
import { Integration, IntegrationDelivery, Secret } from '../../persistence/entities';
import type { DeliveryError } from '../../persistence/entities/integration';
import type { SecretBox } from '../../security/secret-box';
import { workflowStart } from '../../temporal/contracts';
import { insertAndStart } from '../../jobs/create';
import { violatedUniqueIndex } from '../record-fields';
import type { RunsDeps } from '../code/runs/begin';
import { readChatappDelivery } from './chatapp';
import {
  DeliveryRecord,
  firstDelivery,
  newDelivery,
  overRate,
  recordDelivery,
  recordStarted,
  requestPayload,
  threeArgs,
} from './deliveries';
import { verifyChatapp, verifyCodehost } from './signatures';
import { integrationCaller, startAssistantRuns, startStructureRuns } from './targets';

export interface HandlerDeps extends RunsDeps {
  box: SecretBox;
}

export interface Hit {
  integrationId: string;
  query: Record<string, string | string[] | undefined>;
  headers: IncomingHttpHeaders;
  /** The raw body up to `limit` bytes; null when it is larger. */
  readBody: (limit: number) => Promise<Buffer | null>;
  /** The caller of an API key from the Authorization header, or from `?api_key=` when `allowQuery`. 401 otherwise. */
  authenticate: (allowQuery: boolean) => Promise<Caller>;
}

export interface HandlerAnswer {
  delivery_id: string;
  verdict: string;
  structure_run_ids?: string[];
  assistant_run_ids?: string[];
  errors?: DeliveryError[];
  challenge?: string;
  text?: string;
}

const header = (h: IncomingHttpHeaders, name: string) => {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
};

/** A secret's value, or undefined when the reference names no secret of the organization. */
export async function secretValue(ds: DataSource, box: SecretBox, organizationId: string, secretId?: string) {
  if (!secretId) return undefined;
  const secret = await ds.getRepository(Secret).findOneBy({ secret_id: secretId, organization_id: organizationId });
  return secret ? box.open(secret.value_encrypted, secret.secret_id) : undefined;
}

export async function handleHit(deps: HandlerDeps, hit: Hit): Promise<{ status: number; body: HandlerAnswer }> {
  const integration = await deps.ds.getRepository(Integration).findOneBy({ integration_id: hit.integrationId });
  if (!integration) throw notFound('Integration');
  const refuse = async (r: DeliveryRecord, err: HttpError): Promise<never> => {
    await recordDelivery(deps.ds, integration, { ...r, message: r.message ?? err.message });
    throw err;
  };

  const limit = deps.config.integrations.ratePerMinute;
  if (await overRate(deps.ds, integration.integration_id, limit)) {
    await refuse(
      { verdict: 'rate_limited', httpStatus: 429 },
      tooManyRequests(
        `This integration takes at most ${limit} deliveries a minute (INTEGRATION_RATE_LIMIT_PER_MINUTE)`,
      ),
    );
  }

  let caller: Caller | undefined;
  if (integration.type === 'webhook') caller = await webhookCaller(integration, hit, refuse);

  const maxBytes = deps.config.integrations.maxBodyBytes;
  const raw = await hit.readBody(maxBytes);
  if (raw === null) await refuse({ verdict: 'too_large', httpStatus: 413 }, payloadTooLarge(maxBytes));
  const rawBody = raw!.toString('utf8');
  // Bodies become argv strings and jsonb: neither holds a NUL character.
  if (rawBody.includes('\u0000'))
    await refuse({ verdict: 'bad_request', httpStatus: 400 }, badRequest('The body contains a NUL character', '/body'));
  const payload = requestPayload(rawBody, hit.query, hit.headers);

  if (integration.type === 'webhook') return webhook(deps, integration, caller!, hit, payload);
  if (integration.type === 'chatapp') return chatapp(deps, integration, hit, raw!, payload, refuse);
  return codehostApp(deps, integration, hit, raw!, payload, refuse);
}

type Refuse = (r: DeliveryRecord, err: HttpError) => Promise<never>;

async function webhookCaller(integration: Integration, hit: Hit, refuse: Refuse): Promise<Caller> {
  const queryKey = hit.query.api_key !== undefined;
  if (queryKey && !hit.headers.authorization && integration.config.disable_api_key_param) {
    await refuse(
      { verdict: 'forbidden', httpStatus: 403 },
      forbidden('This webhook does not accept ?api_key= (disable_api_key_param); send Authorization: Bearer <key>'),
    );
  }
  let caller: Caller;
  try {
    caller = await hit.authenticate(!integration.config.disable_api_key_param);
  } catch (err) {
    if (err instanceof HttpError && err.status === 401)
      return refuse({ verdict: 'unauthorized', httpStatus: 401 }, err);
    throw err;
  }
  // Another organization's key learns nothing about this integration: it is not found, as everywhere.
  if (caller.organizationId !== integration.organization_id)
    return refuse(
      { verdict: 'unauthorized', httpStatus: 404, message: 'A key of another organization' },
      notFound('Integration'),
    );
  if (caller.runId)
    return refuse({ verdict: 'forbidden', httpStatus: 403 }, forbidden("A run's credential cannot call integrations"));
  return caller;
}

const isDuplicate = (err: unknown) => violatedUniqueIndex(err) === 'integration_deliveries_dedupe';

/** The answer to a repeated delivery: the first one's, and a `duplicate` row in the log. */
async function duplicate(deps: HandlerDeps, integration: Integration, key: string, event?: string | null) {
  const first = await firstDelivery(deps.ds, integration.integration_id, key);
  const row = await recordDelivery(deps.ds, integration, {
    verdict: 'duplicate',
    httpStatus: 200,
    event,
    deliveryKey: key,
    message: `Delivery ${key} was received before (delivery ${first?.delivery_id}): nothing started again`,
  });
  return {
    status: 200,
    body: {
      delivery_id: row.delivery_id,
      verdict: 'duplicate',
      structure_run_ids: first?.structure_run_ids ?? [],
      assistant_run_ids: first?.assistant_run_ids ?? [],
    },
  };
}

async function webhook(
  deps: HandlerDeps,
  integration: Integration,
  caller: Caller,
  hit: Hit,
  payload: ReturnType<typeof requestPayload>,
) {
  const key = header(hit.headers, 'idempotency-key')?.slice(0, 200) || undefined;
  let row: IntegrationDelivery;
  try {
    row = await recordDelivery(deps.ds, integration, {
      verdict: 'accepted',
      httpStatus: 200,
      deliveryKey: key,
      dedupe: true,
    });
  } catch (err) {
    if (key && isDuplicate(err)) return duplicate(deps, integration, key);
    throw err;
  }
  const structures = await startStructureRuns(deps, caller, integration, row.delivery_id, threeArgs(payload));
  const assistants = payload.raw_body.trim()
    ? await startAssistantRuns(deps, caller, integration, row.delivery_id, payload.raw_body)
    : {
        structure_run_ids: [],
        assistant_run_ids: [],
        errors: integration.assistant_ids.map((a) => ({
          type: 'ValidationError',
          message: 'An empty body gives the assistant no input',
          target: `assistant ${a}`,
        })),
      };
  const errors = [...structures.errors, ...assistants.errors];
  await recordStarted(
    deps.ds,
    row.delivery_id,
    { structure_run_ids: structures.structure_run_ids, assistant_run_ids: assistants.assistant_run_ids },
    errors,
  );
  return {
    status: 200,
    body: {
      delivery_id: row.delivery_id,
      verdict: 'accepted',
      structure_run_ids: structures.structure_run_ids,
      assistant_run_ids: assistants.assistant_run_ids,
      errors,
    },
  };
}

/** Inserts the accepted delivery and starts its workflow together (integration-delivery-<uuid>). */
async function queue(deps: HandlerDeps, integration: Integration, record: DeliveryRecord) {
  const row = newDelivery(integration, {
    ...record,
    verdict: 'accepted',
    httpStatus: 200,
    dedupe: true,
    status: 'QUEUED',
  });
  try {
    await insertAndStart(deps.ds, deps.temporal, {
      taskQueue: deps.config.temporal.taskQueue,
      resource: {
        kind: 'integration-delivery',
        id: row.delivery_id,
        organizationId: integration.organization_id,
        summary: `Delivery ${record.event ?? ''} to ${integration.type} integration ${integration.name}`,
      },
      insert: (em) => em.getRepository(IntegrationDelivery).insert(row as QueryDeepPartialEntity<IntegrationDelivery>),
      start: workflowStart.integrationDelivery({
        deliveryId: row.delivery_id,
        timeLimitSeconds: deps.config.integrationDeliveryJob.timeLimitSeconds,
        heartbeatTimeoutSeconds: deps.config.runProcess.heartbeatTimeoutSeconds,
      }),
    });
  } catch (err) {
    if (record.deliveryKey && isDuplicate(err)) return duplicate(deps, integration, record.deliveryKey, record.event);
    throw err;
  }
  return { status: 200, body: { delivery_id: row.delivery_id, verdict: 'accepted' } };
}

async function chatapp(
  deps: HandlerDeps,
  integration: Integration,
  hit: Hit,
  raw: Buffer,
  payload: ReturnType<typeof requestPayload>,
  refuse: Refuse,
) {
  const secret = await secretValue(
    deps.ds,
    deps.box,
    integration.organization_id,
    integration.config.signing_secret_secret_ref,
  );
  const verdict = secret
    ? verifyChatapp(
        secret,
        {
          signature: header(hit.headers, 'x-slack-signature'),
          timestamp: header(hit.headers, 'x-slack-request-timestamp'),
        },
        raw,
      )
    : 'bad_signature';
  if (verdict !== 'ok') {
    await refuse(
      { verdict, httpStatus: 401 },
      unauthorized(
        verdict === 'replayed'
          ? 'The request timestamp is more than 5 minutes away: refused as a replay'
          : 'X-Slack-Signature does not match the signing secret',
      ),
    );
  }
  const delivery = readChatappDelivery(payload.raw_body, header(hit.headers, 'content-type') ?? '');
  if (!delivery) {
    return refuse(
      { verdict: 'bad_request', httpStatus: 400 },
      badRequest('Not a chat app event: url_verification, event_callback with an event_id, or a slash command'),
    );
  }
  if (delivery.kind === 'challenge') {
    const row = await recordDelivery(deps.ds, integration, {
      verdict: 'challenge',
      httpStatus: 200,
      event: 'url_verification',
    });
    return { status: 200, body: { delivery_id: row.delivery_id, verdict: 'challenge', challenge: delivery.challenge } };
  }
  if (delivery.kind === 'ignored') {
    const row = await recordDelivery(deps.ds, integration, {
      verdict: 'ignored',
      httpStatus: 200,
      event: delivery.event,
      deliveryKey: delivery.key,
      message: delivery.reason,
    });
    return { status: 200, body: { delivery_id: row.delivery_id, verdict: 'ignored' } };
  }
  const message = delivery;
  // A retry (X-Slack-Retry-Num) of an event already received is a duplicate through its event id; a retry of
  // one that never reached us is the first delivery of it.
  const answer = await queue(deps, integration, {
    verdict: 'accepted',
    httpStatus: 200,
    event: message.event,
    deliveryKey: message.key,
    payload,
  });
  return message.event === 'slash_command' ? { ...answer, body: { ...answer.body, text: 'Working on it…' } } : answer;
}

async function codehostApp(
  deps: HandlerDeps,
  integration: Integration,
  hit: Hit,
  raw: Buffer,
  payload: ReturnType<typeof requestPayload>,
  refuse: Refuse,
) {
  const secret = await secretValue(
    deps.ds,
    deps.box,
    integration.organization_id,
    integration.config.webhook_secret_ref,
  );
  if (!secret || verifyCodehost(secret, header(hit.headers, 'x-hub-signature-256'), raw) !== 'ok') {
    await refuse(
      { verdict: 'bad_signature', httpStatus: 401 },
      unauthorized('X-Hub-Signature-256 does not match the webhook secret'),
    );
  }
  const event = header(hit.headers, 'x-github-event') ?? 'unknown';
  const key = header(hit.headers, 'x-github-delivery')?.slice(0, 200) || undefined;
  try {
    JSON.parse(payload.raw_body);
  } catch {
    await refuse({ verdict: 'bad_request', httpStatus: 400, event }, badRequest('The body is not JSON', '/body'));
  }
  if (event === 'ping') {
    const row = await recordDelivery(deps.ds, integration, {
      verdict: 'ignored',
      httpStatus: 200,
      event,
      deliveryKey: key,
      message: 'ping: the app reaches the platform',
    });
    return { status: 200, body: { delivery_id: row.delivery_id, verdict: 'ignored' } };
  }
  return queue(deps, integration, { verdict: 'accepted', httpStatus: 200, event, deliveryKey: key, payload });
}
