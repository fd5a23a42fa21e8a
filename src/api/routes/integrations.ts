// Integrations: CRUD, the delivery log, and the public handler outside senders call
// (src/services/integrations/handler.ts says what each type does with a delivery).
import getRawBody from 'raw-body';
import type { Integration, IntegrationDelivery } from '../../persistence/entities/integration';
import { DELIVERY_STATUSES, DELIVERY_VERDICTS } from '../../persistence/entities/integration';
import { iso } from '../../persistence/scoped';
import { appManifest } from '../../services/integrations/chatapp';
import { listDeliveries } from '../../services/integrations/deliveries';
import { handleHit } from '../../services/integrations/handler';
import {
  createIntegration,
  deleteIntegration,
  findIntegration,
  listIntegrations,
  updateIntegration,
} from '../../services/integrations/integrations';
import { withProviderWords } from '../../services/provider-words';
import { badRequest } from '../../errors';
import { authenticate, extractKey } from '../http/auth';
import { route } from '../http/route';
import { defineSchema, nullableTimestamp, pageOf, str, timestamp, uuid } from '../schemas/registry';

const TAG = 'Integrations';
const MAX_LINKED = 100;

const secretRef = {
  ...uuid,
  description: 'The id of a secret of the organization (its value is never returned).',
} as const;
const chatappFields = {
  app_name: str(1, 200),
  app_display_name: str(1, 200),
  app_description: str(1, 200),
  bot_token_secret_ref: secretRef,
  signing_secret_secret_ref: secretRef,
} as const;
const codehostFields = {
  app_id: str(1, 200),
  private_key_secret_ref: secretRef,
  webhook_secret_ref: secretRef,
} as const;
const webhookFields = { disable_api_key_param: { type: 'boolean' } } as const;

const member = (properties: Record<string, unknown>, required: string[] = []) => ({
  type: 'object',
  properties,
  ...(required.length ? { required } : {}),
});
const oneMember = (members: Record<string, unknown>, description: string) => ({
  type: 'object',
  minProperties: 1,
  maxProperties: 1,
  additionalProperties: false,
  properties: members,
  description,
});
const chatappRequired = ['app_name', 'app_display_name', 'app_description'];
/** A type and its config member, in either word (`chatapp` / `slack`, `codehost_app` / `github_app`). */
const pairs = [
  { types: ['webhook'], members: { webhook: member(webhookFields) } },
  {
    types: ['chatapp', 'slack'],
    members: {
      chatapp: member(chatappFields, chatappRequired),
      slack: member(chatappFields, chatappRequired),
    },
  },
  {
    types: ['codehost_app', 'github_app'],
    members: { codehost_app: member(codehostFields), github_app: member(codehostFields) },
  },
];
const typeDescription = "chatapp, codehost_app or webhook (the clients' words slack and github_app are accepted)";
const ids = (what: string) => ({
  type: 'array',
  items: uuid,
  maxItems: MAX_LINKED,
  description: `Ids of ${what} of the organization (409 naming one that is not).`,
});
const common = {
  name: str(1, 200),
  description: str(1, 200),
  structure_ids: ids('structures'),
  assistant_ids: ids('assistants'),
} as const;

const CreateRequest = defineSchema('CreateIntegrationRequest', {
  type: 'object',
  required: ['name', 'type', 'config'],
  properties: {
    ...common,
    type: { type: 'string', enum: pairs.flatMap((p) => p.types), description: typeDescription },
    config: { type: 'object' },
  },
  oneOf: pairs.map((p) => ({
    properties: {
      type: { enum: p.types },
      config: oneMember(p.members, 'Exactly one member, named like the type.'),
    },
  })),
});

const UpdateRequest = defineSchema('UpdateIntegrationRequest', {
  type: 'object',
  properties: {
    ...common,
    type: {
      type: 'string',
      enum: pairs.flatMap((p) => p.types),
      description: `${typeDescription}; it cannot change (409 when it differs)`,
    },
    config: oneMember(
      Object.fromEntries(pairs.flatMap((p) => Object.keys(p.members)).map((m) => [m, member(fieldsOf(m))])),
      "One member named like the integration's type (409 otherwise); its fields are merged into the stored ones.",
    ),
  },
});

function fieldsOf(m: string) {
  return m === 'webhook' ? webhookFields : m === 'chatapp' || m === 'slack' ? chatappFields : codehostFields;
}

const endpointDoc = {
  type: 'string',
  description: 'PUBLIC_BASE_URL + /api/integrations/{integration_id}/handler',
} as const;
const ChatappDetail = {
  type: 'object',
  required: [
    'app_name',
    'app_display_name',
    'app_description',
    'app_manifest',
    'bot_token_secret_ref',
    'signing_secret_secret_ref',
  ],
  properties: {
    app_name: { type: 'string' },
    app_display_name: { type: 'string' },
    app_description: { type: 'string' },
    app_manifest: {
      description:
        "The chat app's manifest: bot user, scopes, event subscription and slash command pointing at the handler.",
    },
    bot_token_secret_ref: uuid,
    signing_secret_secret_ref: uuid,
    integration_endpoint: endpointDoc,
  },
} as const;
const CodehostDetail = {
  type: 'object',
  required: ['app_id', 'integration_endpoint', 'private_key_secret_ref', 'webhook_secret_ref'],
  properties: {
    app_id: { type: 'string' },
    integration_endpoint: endpointDoc,
    private_key_secret_ref: uuid,
    webhook_secret_ref: uuid,
  },
} as const;
const WebhookDetail = {
  type: 'object',
  required: ['disable_api_key_param', 'integration_endpoint'],
  properties: { disable_api_key_param: { type: 'boolean' }, integration_endpoint: endpointDoc },
} as const;

const IntegrationSchema = defineSchema('Integration', {
  type: 'object',
  required: [
    'integration_id',
    'assistant_ids',
    'structure_ids',
    'config',
    'created_at',
    'created_by',
    'description',
    'name',
    'organization_id',
    'type',
    'updated_at',
  ],
  properties: {
    integration_id: uuid,
    name: { type: 'string' },
    description: { type: 'string' },
    type: { type: 'string', enum: ['chatapp', 'codehost_app', 'webhook'] },
    config: {
      type: 'object',
      description: "One member named like the type (the chat app's and code host's own words beside, same value).",
      properties: {
        chatapp: ChatappDetail,
        slack: ChatappDetail,
        codehost_app: CodehostDetail,
        github_app: CodehostDetail,
        webhook: WebhookDetail,
      },
    },
    structure_ids: { type: 'array', items: uuid },
    assistant_ids: { type: 'array', items: uuid },
    organization_id: uuid,
    created_by: { type: 'string' },
    created_at: timestamp,
    updated_at: timestamp,
  },
});

export const integrationEndpoint = (publicBaseUrl: string, id: string) =>
  `${publicBaseUrl}/api/integrations/${id}/handler`;

const present = (publicBaseUrl: string) => (i: Integration) => {
  const endpoint = integrationEndpoint(publicBaseUrl, i.integration_id);
  const c = i.config;
  const detail =
    i.type === 'webhook'
      ? { disable_api_key_param: c.disable_api_key_param ?? false, integration_endpoint: endpoint }
      : i.type === 'chatapp'
        ? {
            app_name: c.app_name ?? '',
            app_display_name: c.app_display_name ?? '',
            app_description: c.app_description ?? '',
            app_manifest: appManifest(c, endpoint),
            bot_token_secret_ref: c.bot_token_secret_ref,
            signing_secret_secret_ref: c.signing_secret_secret_ref,
            integration_endpoint: endpoint,
          }
        : {
            app_id: c.app_id ?? '',
            integration_endpoint: endpoint,
            private_key_secret_ref: c.private_key_secret_ref,
            webhook_secret_ref: c.webhook_secret_ref,
          };
  return {
    integration_id: i.integration_id,
    name: i.name,
    description: i.description,
    type: i.type,
    config: withProviderWords({ [i.type]: detail }),
    structure_ids: i.structure_ids,
    assistant_ids: i.assistant_ids,
    organization_id: i.organization_id,
    created_by: i.created_by,
    created_at: iso(i.created_at),
    updated_at: iso(i.updated_at),
  };
};

const DeliveryErrorSchema = {
  type: 'object',
  required: ['type', 'message'],
  properties: { type: { type: 'string' }, message: { type: 'string' }, target: { type: 'string' } },
} as const;

const DeliverySchema = defineSchema('IntegrationDelivery', {
  type: 'object',
  required: [
    'delivery_id',
    'integration_id',
    'received_at',
    'verdict',
    'http_status',
    'status',
    'structure_run_ids',
    'assistant_run_ids',
    'deployment_ids',
    'errors',
    'completed_at',
  ],
  properties: {
    delivery_id: uuid,
    integration_id: uuid,
    received_at: timestamp,
    verdict: {
      type: 'string',
      enum: [...DELIVERY_VERDICTS],
      description:
        'accepted (work started or queued), duplicate (its delivery id was seen), ignored, challenge (URL verification), or why it was refused',
    },
    http_status: { type: 'integer', description: 'What the handler answered.' },
    event: { type: ['string', 'null'] },
    delivery_key: {
      type: ['string', 'null'],
      description: "The sender's delivery id (event_id, X-GitHub-Delivery, Idempotency-Key).",
    },
    status: {
      type: ['string', 'null'],
      enum: [...DELIVERY_STATUSES, null],
      description:
        'The work of an accepted chatapp or codehost_app delivery (workflow integration-delivery-<delivery_id>).',
    },
    status_detail: {},
    structure_run_ids: { type: 'array', items: uuid },
    assistant_run_ids: { type: 'array', items: uuid },
    deployment_ids: { type: 'array', items: uuid },
    errors: { type: 'array', items: DeliveryErrorSchema },
    completed_at: nullableTimestamp,
  },
});

const presentDelivery = (d: IntegrationDelivery) => ({
  delivery_id: d.delivery_id,
  integration_id: d.integration_id,
  received_at: iso(d.received_at),
  verdict: d.verdict,
  http_status: d.http_status,
  event: d.event,
  delivery_key: d.delivery_key,
  status: d.status,
  ...(d.status_detail ? { status_detail: d.status_detail } : {}),
  structure_run_ids: d.structure_run_ids,
  assistant_run_ids: d.assistant_run_ids,
  deployment_ids: d.deployment_ids,
  errors: d.errors,
  completed_at: iso(d.completed_at),
});

const integrationPath = { integration_id: uuid } as const;

route({
  operationId: 'ListIntegrations',
  method: 'get',
  path: '/integrations',
  tag: TAG,
  paged: true,
  summary: "The organization's integrations, newest first.",
  responses: {
    200: { description: 'Integrations', schema: pageOf('IntegrationList', 'integrations', IntegrationSchema) },
  },
  handler: async ({ deps, caller, page }) => {
    const { items, pagination } = await listIntegrations(deps.ds, caller, page);
    return { status: 200, body: { integrations: items.map(present(deps.config.publicBaseUrl)), pagination } };
  },
});

route({
  operationId: 'CreateIntegration',
  method: 'post',
  path: '/integrations',
  tag: TAG,
  summary:
    'Creates an integration; outside senders call its `integration_endpoint`. Every structure, assistant and secret id ' +
    'must be of the organization (409 naming it otherwise). A chatapp or codehost_app without a secret reference gets ' +
    'a secret of its own (a random placeholder) to fill through PATCH /secrets/{id}.',
  body: CreateRequest,
  bodyRequired: true,
  responses: { 201: { description: 'Integration', schema: IntegrationSchema } },
  handler: async ({ deps, caller, body }) => {
    // The schema is assembled from the types' variants at run time, so it has no static type: the service's
    // request type names what ajv checked.
    const request = body as Parameters<typeof createIntegration>[3];
    return {
      status: 201,
      body: present(deps.config.publicBaseUrl)(await createIntegration(deps.ds, deps.box, caller, request)),
    };
  },
});

route({
  operationId: 'GetIntegration',
  method: 'get',
  path: '/integrations/{integration_id}',
  tag: TAG,
  params: integrationPath,
  summary: 'An integration.',
  responses: { 200: { description: 'Integration', schema: IntegrationSchema } },
  handler: async ({ deps, caller, params }) => ({
    status: 200,
    body: present(deps.config.publicBaseUrl)(await findIntegration(deps.ds, caller, params.integration_id)),
  }),
});

route({
  operationId: 'UpdateIntegration',
  method: 'patch',
  path: '/integrations/{integration_id}',
  tag: TAG,
  params: integrationPath,
  summary: 'Changes the given fields; the type cannot change (409).',
  body: UpdateRequest,
  responses: { 200: { description: 'Integration', schema: IntegrationSchema } },
  handler: async ({ deps, caller, params, body }) => {
    // The schema is assembled from the types' variants at run time, so it has no static type: the service's
    // request type names what ajv checked.
    const request = body as Parameters<typeof updateIntegration>[3];
    const integration = await updateIntegration(deps.ds, caller, params.integration_id, request);
    return { status: 200, body: present(deps.config.publicBaseUrl)(integration) };
  },
});

route({
  operationId: 'DeleteIntegration',
  method: 'delete',
  path: '/integrations/{integration_id}',
  tag: TAG,
  params: integrationPath,
  summary: 'Deletes the integration and its delivery log; runs and deployments it started go on.',
  responses: { 204: { description: 'Deleted' } },
  handler: async ({ deps, caller, params }) => {
    await deleteIntegration(deps.ds, caller, params.integration_id);
    return { status: 204 };
  },
});

route({
  operationId: 'ListIntegrationDeliveries',
  method: 'get',
  path: '/integrations/{integration_id}/deliveries',
  tag: TAG,
  params: integrationPath,
  paged: true,
  summary: "Every hit of the integration's handler, newest first: its verdict, what it answered and what it started.",
  responses: {
    200: { description: 'Deliveries', schema: pageOf('IntegrationDeliveryList', 'deliveries', DeliverySchema) },
  },
  handler: async ({ deps, caller, params, page }) => {
    const { items, pagination } = await listDeliveries(deps.ds, caller, params.integration_id, page);
    return { status: 200, body: { deliveries: items.map(presentDelivery), pagination } };
  },
});

const HandlerAnswer = defineSchema('IntegrationHandlerAnswer', {
  type: 'object',
  required: ['delivery_id', 'verdict'],
  properties: {
    delivery_id: { ...uuid, description: 'The row of the delivery log (GET /integrations/{id}/deliveries).' },
    verdict: { type: 'string', enum: ['accepted', 'duplicate', 'ignored', 'challenge'] },
    structure_run_ids: { type: 'array', items: uuid, description: 'webhook: the structure runs it started.' },
    assistant_run_ids: { type: 'array', items: uuid, description: 'webhook: the assistant runs it started.' },
    errors: {
      type: 'array',
      items: DeliveryErrorSchema,
      description: 'Linked structures or assistants that could not start.',
    },
    challenge: { type: 'string', description: "chatapp: the URL verification's challenge, answered." },
    text: { type: 'string', description: 'chatapp slash commands: what the chat app shows the user meanwhile.' },
  },
});

route({
  operationId: 'InvokeIntegrationHandler',
  needsDiskSpace: true,
  method: 'post',
  path: '/integrations/{integration_id}/handler',
  tag: TAG,
  auth: 'none',
  params: integrationPath,
  query: { api_key: { type: 'string', description: 'webhook: the API key, unless disable_api_key_param (then 403).' } },
  rawBody: { contentType: '*/*', description: 'Anything the sender sends; verified and passed on as received.' },
  summary:
    'Where outside senders deliver. webhook: an API key (Authorization: Bearer, or ?api_key= unless ' +
    'disable_api_key_param: 403) starts a run of each linked structure with [raw_body, query_params_json, ' +
    'headers_json] and of each linked assistant with the body as input; answers their ids. chatapp: Slack-signed ' +
    '(X-Slack-Signature v0, 401 when wrong or older than 5 minutes); answers URL verification, acknowledges a message ' +
    'at once and answers it in its thread. codehost_app: X-Hub-Signature-256 (401); a push deploys the linked ' +
    'structures following its branch, other events run them. Every hit is in the delivery log; a repeated delivery ' +
    '(event_id, X-GitHub-Delivery, Idempotency-Key) starts nothing again. 404 unknown integration, 413 over ' +
    'INTEGRATION_MAX_BODY_BYTES, 429 over INTEGRATION_RATE_LIMIT_PER_MINUTE.',
  responses: { 200: { description: 'The verdict and what was started', schema: HandlerAnswer } },
  handler: async ({ ctx, deps, params }) => {
    const answer = await handleHit(deps, {
      integrationId: params.integration_id,
      query: ctx.query as Record<string, string | string[] | undefined>,
      headers: ctx.req.headers,
      readBody: async (limit) => {
        try {
          return await getRawBody(ctx.req, { limit });
        } catch (err) {
          if ((err as { type?: string }).type === 'entity.too.large') return null;
          throw badRequest('Could not read the request body', '/body');
        }
      },
      authenticate: async (allowQuery) =>
        authenticate(deps.ds, extractKey(ctx.get('authorization') || undefined, ctx.query.api_key, allowQuery)),
    });
    return answer;
  },
});
