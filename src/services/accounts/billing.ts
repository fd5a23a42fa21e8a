// Billing through a Stripe-compatible payment provider: a checkout session for a price (found by its lookup
// key), a billing portal session, and the provider's signed events, which move the organization's
// `entitlement` (FREE, PAID, UNPAID, EXPIRED). Each organization has one customer at the provider, created by
// its first billing request (with an idempotency key, so two concurrent first requests create one).
// Without BILLING_SECRET_KEY every billing operation answers 503 and organizations stay FREE.
import type { DataSource } from 'typeorm';
import type { Caller } from '../caller';
import type { BillingConfig, Config } from '../../config';
import { conflict, HttpError, serviceUnavailable, unauthorized } from '../../errors';
import type { Logger } from '../../logger';
import { Stripe, stripeClient } from '../../drivers/billing/stripe';
import { BillingCustomer, Organization } from '../../persistence/entities';

export interface BillingDeps {
  ds: DataSource;
  config: Pick<Config, 'billing'>;
  log: Logger;
}

export const ENTITLEMENTS = ['FREE', 'PAID', 'UNPAID', 'EXPIRED'] as const;
export type Entitlement = (typeof ENTITLEMENTS)[number];

export const NOT_CONFIGURED =
  'Billing is not configured on this installation: the operator sets BILLING_SECRET_KEY ' +
  '(docs/connections-and-billing.md); every organization stays on the FREE entitlement';

function billingOf(config: BillingDeps['config']): BillingConfig {
  if (!config.billing) throw serviceUnavailable(NOT_CONFIGURED);
  return config.billing;
}

/**
 * The provider's refusal of a well-formed request (a price or customer it does not have) is a 409 quoting it;
 * a refused key, a rate limit, an outage or a timeout is a 503.
 */
function providerError(err: unknown): HttpError {
  if (err instanceof Stripe.errors.StripeInvalidRequestError)
    return conflict(`The payment provider refused the request: ${err.message}`);
  if (err instanceof Stripe.errors.StripeAuthenticationError)
    return serviceUnavailable('The payment provider refused our key (BILLING_SECRET_KEY)');
  if (err instanceof Stripe.errors.StripeError)
    return serviceUnavailable(`The payment provider failed: ${err.message}; try again later`);
  return err as HttpError;
}

async function withProvider<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw providerError(err);
  }
}

/** The organization's customer at the provider, created (once) on first use. */
async function customerOf(ds: DataSource, stripe: Stripe, organizationId: string): Promise<string> {
  const repo = ds.getRepository(BillingCustomer);
  const known = await repo.findOneBy({ organization_id: organizationId });
  if (known) return known.customer_id;
  const org = await ds.getRepository(Organization).findOneByOrFail({ organization_id: organizationId });
  const customer = await stripe.customers.create(
    { name: org.name, metadata: { organization_id: organizationId } },
    { idempotencyKey: `tarmac-customer-${organizationId}` },
  );
  await ds.query(
    `INSERT INTO billing_customers (organization_id, customer_id, created_at) VALUES ($1, $2, now())
     ON CONFLICT (organization_id) DO NOTHING`,
    [organizationId, customer.id],
  );
  return (await repo.findOneByOrFail({ organization_id: organizationId })).customer_id;
}

/** CreateCheckoutSession: the provider's hosted checkout for the price with that lookup key. */
export async function createCheckoutSession(deps: BillingDeps, caller: Caller, lookupKey: string): Promise<string> {
  const billing = billingOf(deps.config);
  const stripe = stripeClient(billing);
  return withProvider(async () => {
    const prices = await stripe.prices.list({ lookup_keys: [lookupKey], active: true, limit: 1 });
    const price = prices.data[0];
    if (!price) throw conflict(`The payment provider has no active price with the lookup key ${lookupKey}`);
    const customer = await customerOf(deps.ds, stripe, caller.organizationId);
    const mode = price.recurring ? 'subscription' : 'payment';
    const metadata = { organization_id: caller.organizationId };
    const session = await stripe.checkout.sessions.create({
      mode,
      customer,
      client_reference_id: caller.organizationId,
      line_items: [{ price: price.id, quantity: 1 }],
      success_url: billing.successUrl,
      cancel_url: billing.cancelUrl,
      metadata,
      ...(mode === 'subscription' ? { subscription_data: { metadata } } : {}),
    });
    if (!session.url) throw serviceUnavailable('The payment provider answered a checkout session without a URL');
    return session.url;
  });
}

/** CreateBillingManagementUrl: the provider's billing portal for the organization's customer. */
export async function createBillingPortalSession(deps: BillingDeps, caller: Caller): Promise<string> {
  const billing = billingOf(deps.config);
  const stripe = stripeClient(billing);
  return withProvider(async () => {
    const customer = await customerOf(deps.ds, stripe, caller.organizationId);
    const session = await stripe.billingPortal.sessions.create({ customer, return_url: billing.returnUrl });
    return session.url;
  });
}

/** What an event means for the entitlement of its customer's organization (undefined: nothing). */
function entitlementFrom(event: Stripe.Event): { customer?: string; entitlement?: Entitlement; why: string } {
  const customerIdOf = (c: unknown) =>
    typeof c === 'string' ? c : typeof c === 'object' && c && 'id' in c ? String(c.id) : undefined;
  switch (event.type) {
    case 'checkout.session.completed': {
      const s = event.data.object;
      const paid = s.payment_status === 'paid' || s.payment_status === 'no_payment_required';
      return {
        customer: customerIdOf(s.customer),
        entitlement: paid ? 'PAID' : undefined,
        why: paid ? 'checkout paid' : `checkout ${s.payment_status}`,
      };
    }
    case 'customer.subscription.updated':
    case 'customer.subscription.created': {
      const sub = event.data.object;
      const byStatus: Partial<Record<string, Entitlement>> = {
        active: 'PAID',
        trialing: 'PAID',
        past_due: 'UNPAID',
        unpaid: 'UNPAID',
        paused: 'UNPAID',
        canceled: 'EXPIRED',
        incomplete_expired: 'EXPIRED',
      };
      return {
        customer: customerIdOf(sub.customer),
        entitlement: byStatus[sub.status],
        why: `subscription ${sub.status}`,
      };
    }
    case 'customer.subscription.deleted':
      return { customer: customerIdOf(event.data.object.customer), entitlement: 'EXPIRED', why: 'subscription ended' };
    case 'invoice.payment_failed':
      return { customer: customerIdOf(event.data.object.customer), entitlement: 'UNPAID', why: 'payment failed' };
    default:
      return { why: `${event.type} is not a billing event we act on` };
  }
}

export interface EventVerdict {
  duplicate: boolean;
  verdict: string;
}

/**
 * The billing webhook: verifies the signature (Stripe-Signature, BILLING_WEBHOOK_SECRET; a timestamp older
 * than 5 minutes is a replay), then applies the event once (by event id). An event older than the one that
 * last set the entitlement changes nothing: the provider does not deliver in order.
 */
export async function receiveBillingEvent(
  deps: BillingDeps,
  rawBody: Buffer,
  signature: string | undefined,
): Promise<EventVerdict> {
  const billing = billingOf(deps.config);
  if (!billing.webhookSecret)
    throw serviceUnavailable('Billing events are not accepted: the operator sets BILLING_WEBHOOK_SECRET');
  if (!signature) throw unauthorized('A billing event needs its Stripe-Signature header');
  let event: Stripe.Event;
  try {
    event = stripeClient(billing).webhooks.constructEvent(rawBody, signature, billing.webhookSecret);
  } catch (err) {
    deps.log.warn({ reason: (err as Error).message }, 'billing event refused: bad signature');
    throw unauthorized(`The billing event's signature does not verify: ${(err as Error).message}`);
  }
  const meaning = entitlementFrom(event);
  const result = await deps.ds.transaction(async (em): Promise<EventVerdict> => {
    const inserted: unknown[] = await em.query(
      `INSERT INTO billing_events (event_id, type, verdict, received_at) VALUES ($1, $2, 'pending', now())
       ON CONFLICT (event_id) DO NOTHING RETURNING event_id`,
      [event.id, event.type],
    );
    if (!inserted.length) {
      const [seen] = await em.query(`SELECT verdict FROM billing_events WHERE event_id = $1`, [event.id]);
      return { duplicate: true, verdict: seen?.verdict ?? 'pending' };
    }
    let verdict = `ignored: ${meaning.why}`;
    let organizationId: string | null = null;
    if (meaning.customer) {
      const [customer]: Array<{ organization_id: string; entitlement_event_at: Date | null }> = await em.query(
        `SELECT organization_id, entitlement_event_at FROM billing_customers WHERE customer_id = $1 FOR UPDATE`,
        [meaning.customer],
      );
      const at = new Date(event.created * 1000);
      organizationId = customer?.organization_id ?? null;
      if (!customer) verdict = `ignored: customer ${meaning.customer} belongs to no organization`;
      else if (!meaning.entitlement) verdict = `ignored: ${meaning.why}`;
      else if (customer.entitlement_event_at && at < customer.entitlement_event_at) {
        verdict = `ignored: older than the event that set the entitlement (${meaning.why})`;
      } else {
        await em.query(`UPDATE organizations SET entitlement = $2, updated_at = now() WHERE organization_id = $1`, [
          customer.organization_id,
          meaning.entitlement,
        ]);
        await em.query(`UPDATE billing_customers SET entitlement_event_at = $2 WHERE organization_id = $1`, [
          customer.organization_id,
          at,
        ]);
        verdict = `entitlement ${meaning.entitlement} (${meaning.why})`;
      }
    }
    await em.query(`UPDATE billing_events SET verdict = $2, organization_id = $3 WHERE event_id = $1`, [
      event.id,
      verdict,
      organizationId,
    ]);
    return { duplicate: false, verdict };
  });
  deps.log.info({ eventId: event.id, type: event.type, ...result }, 'billing event');
  return result;
}
