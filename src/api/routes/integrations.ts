// Integrations: CRUD, the delivery log (and the cancel of a delivery's work), and the public handler outside senders call
// (src/services/integrations/handler.ts says what each type does with a delivery). Their shapes are in
// integration-schemas.ts.
import getRawBody from 'raw-body';
import { cancelDelivery, listDeliveries } from '../../services/integrations/deliveries';
import { handleHit } from '../../services/integrations/handler';
import {
  createIntegration,
  deleteIntegration,
  findIntegration,
  listIntegrations,
  updateIntegration,
} from '../../services/integrations/integrations';
import { badRequest } from '../../errors';
import { authenticate, extractKey } from '../http/auth';
import { route } from '../http/route';
import { defineSchema, pageOf, uuid } from '../schemas/registry';
import {
  CreateRequest,
  DeliveryErrorSchema,
  DeliverySchema,
  IntegrationSchema,
  present,
  presentDelivery,
  UpdateRequest,
} from './integration-schemas';

const TAG = 'Integrations';

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
  audit: (b) => ({ name: b.name, type: b.type }),
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
  audit: (b) => ({ name: b.name }),
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
  summary:
    "Deletes the integration and its delivery log; its deliveries' open work is cancelled first (bounded wait). " +
    'Runs and deployments it started go on.',
  responses: { 204: { description: 'Deleted' } },
  handler: async ({ deps, caller, params }) => {
    await deleteIntegration(deps, caller, params.integration_id);
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

route({
  operationId: 'CancelIntegrationDelivery',
  method: 'post',
  path: '/integrations/{integration_id}/deliveries/{delivery_id}/cancel',
  tag: TAG,
  params: { ...integrationPath, delivery_id: uuid },
  summary:
    "Cancels the delivery's work (workflow integration-delivery-<delivery_id>; runs and deployments it started go on) " +
    'and answers it once CANCELLED (bounded wait); an already cancelled one as is; 409 when its work already ended ' +
    'otherwise, or it has none (a webhook delivery, a refused one).',
  responses: { 200: { description: 'Delivery', schema: DeliverySchema } },
  handler: async ({ deps, caller, params }) => ({
    status: 200,
    body: presentDelivery(await cancelDelivery(deps, caller, params.integration_id, params.delivery_id)),
  }),
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
