// Billing: checkout and billing portal sessions at the Stripe-compatible payment provider, and the provider's
// signed events (the billing webhook), which move the organization's entitlement. 503 when not configured.
import getRawBody from 'raw-body';
import { badRequest, payloadTooLarge } from '../../errors';
import {
  createBillingPortalSession,
  createCheckoutSession,
  receiveBillingEvent,
} from '../../services/accounts/billing';
import { route } from '../http/route';
import { defineSchema, str } from '../schemas/registry';

const TAG = 'Billing and configuration';
const NOT_CONFIGURED = '503 when billing is not configured on this installation (BILLING_SECRET_KEY)';

route({
  operationId: 'CreateCheckoutSession',
  method: 'post',
  path: '/billing/checkout-session',
  tag: TAG,
  summary:
    "A checkout session at the payment provider for the price with this lookup key, for the organization's customer " +
    '(created on first use); answers the URL to send the user to. 409 when the provider has no active price with ' +
    `that lookup key; ${NOT_CONFIGURED} or the provider fails.`,
  body: defineSchema('CreateCheckoutSessionRequest', {
    type: 'object',
    required: ['price_lookup_key'],
    properties: { price_lookup_key: { ...str(1, 200), description: "The price's lookup key at the provider." } },
  }),
  bodyRequired: true,
  responses: {
    201: {
      description: 'Checkout session',
      schema: defineSchema('CheckoutSession', {
        type: 'object',
        required: ['redirect_url'],
        properties: { redirect_url: { type: 'string' } },
      }),
    },
  },
  handler: async ({ deps, caller, body }) => ({
    status: 201,
    body: { redirect_url: await createCheckoutSession(deps, caller, body.price_lookup_key) },
  }),
});

route({
  operationId: 'CreateBillingManagementUrl',
  method: 'post',
  path: '/billing/management-url',
  tag: TAG,
  summary: `The payment provider's billing portal for the organization's customer (created on first use); ${NOT_CONFIGURED} or the provider fails.`,
  responses: {
    201: {
      description: 'Billing portal session',
      schema: defineSchema('BillingManagementUrl', {
        type: 'object',
        required: ['billing_management_url'],
        properties: { billing_management_url: { type: 'string' } },
      }),
    },
  },
  handler: async ({ deps, caller }) => ({
    status: 201,
    body: { billing_management_url: await createBillingPortalSession(deps, caller) },
  }),
});

route({
  operationId: 'ReceiveBillingEvent',
  method: 'post',
  path: '/billing/webhook',
  tag: TAG,
  auth: 'none',
  summary:
    "The payment provider's events (point its webhook endpoint here). Authenticated by the `Stripe-Signature` header " +
    '(HMAC-SHA256 with BILLING_WEBHOOK_SECRET): 401 when it is missing, does not verify or is older than 5 minutes ' +
    '(a replay). checkout.session.completed, customer.subscription.created/updated/deleted and ' +
    "invoice.payment_failed move the organization's entitlement; every event is applied once (by its id) and an " +
    `event older than the one that set the entitlement changes nothing. ${NOT_CONFIGURED} or BILLING_WEBHOOK_SECRET.`,
  rawBody: { contentType: 'application/json', description: 'The event, exactly as the provider sent it.' },
  responses: {
    200: {
      description: 'What the event did',
      schema: defineSchema('BillingEventReceipt', {
        type: 'object',
        required: ['received', 'duplicate', 'verdict'],
        properties: {
          received: { type: 'boolean' },
          duplicate: { type: 'boolean', description: 'The event was received before; nothing was done again.' },
          verdict: { type: 'string' },
        },
      }),
    },
  },
  handler: async ({ ctx, deps }) => {
    let raw: Buffer;
    try {
      raw = await getRawBody(ctx.req, { limit: deps.config.maxJsonBodyBytes });
    } catch (err) {
      if ((err as { type?: string }).type === 'entity.too.large') throw payloadTooLarge(deps.config.maxJsonBodyBytes);
      throw badRequest('Could not read the request body', '/body');
    }
    const { duplicate, verdict } = await receiveBillingEvent(deps, raw, ctx.get('stripe-signature') || undefined);
    return { status: 200, body: { received: true, duplicate, verdict } };
  },
});
