// Billing against the stack's local Stripe (test/harness/stripe-double.ts): checkout and billing portal sessions
// through the official `stripe` package, and signed billing events (Stripe's signature scheme) that move the
// organization's entitlement, once per event id, in the order of their creation.
import { expect } from 'chai';
import { as, request } from '../harness/client';
import { getStack, newTenant, startApi } from '../harness/stack';

const webhook = () => `${getStack().baseUrl}/api/billing/webhook`;
const entitlementOf = async (t: { key: string; organizationId: string }) =>
  (await as(t.key).get(`/api/organizations/${t.organizationId}`)).body.entitlement;
const customersOf = (organizationId: string) =>
  [...getStack().stripe.customers.values()].filter((c) => c.metadata.organization_id === organizationId);

describe('billing', function () {
  this.timeout(60_000);

  it('creates checkout sessions for a price found by lookup key, with one customer per organization', async () => {
    const { stripe, config } = getStack();
    const t = await newTenant('bill');
    const api = as(t.key);
    const key = `pro_${Math.random().toString(36).slice(2)}`;
    const price = stripe.addPrice({ lookupKey: key });
    const since = stripe.requests.length;

    const res = await api.post('/api/billing/checkout-session', { price_lookup_key: key });
    expect(res.status, res.text).to.equal(201);
    const session = [...stripe.checkoutSessions.values()].find((s) => s.url === res.body.redirect_url)!;
    expect(session, res.body.redirect_url).to.not.equal(undefined);

    const [lookup, customer, create] = stripe.requests.slice(since);
    expect(lookup).to.deep.include({ method: 'GET', path: '/v1/prices' });
    expect(lookup.params).to.deep.equal({ lookup_keys: [key], active: 'true', limit: '1' });
    expect(customer).to.deep.include({ method: 'POST', path: '/v1/customers' });
    expect(customer.params.metadata).to.deep.equal({ organization_id: t.organizationId });
    expect(customer.idempotencyKey).to.equal(`tarmac-customer-${t.organizationId}`);
    expect(customer.stripeVersion).to.match(/^\d{4}-\d{2}-\d{2}\./);
    expect(create).to.deep.include({ method: 'POST', path: '/v1/checkout/sessions' });
    expect(create.params).to.deep.include({
      mode: 'subscription',
      customer: customersOf(t.organizationId)[0].id,
      client_reference_id: t.organizationId,
      success_url: config.billing!.successUrl,
      cancel_url: config.billing!.cancelUrl,
      line_items: [{ price: price.id, quantity: '1' }],
    });
    expect(create.params.subscription_data).to.deep.equal({ metadata: { organization_id: t.organizationId } });

    // Again, and a one-time price: the same customer, mode payment.
    const once = `credits_${Math.random().toString(36).slice(2)}`;
    stripe.addPrice({ lookupKey: once, recurring: false });
    expect((await api.post('/api/billing/checkout-session', { price_lookup_key: once })).status).to.equal(201);
    expect(stripe.requests.at(-1)!.params.mode).to.equal('payment');
    expect(customersOf(t.organizationId)).to.have.length(1);

    // Concurrent first requests of a new organization still make one customer (idempotency key).
    const u = await newTenant('bill-race');
    const all = await Promise.all(
      [1, 2, 3].map(() => as(u.key).post('/api/billing/checkout-session', { price_lookup_key: key })),
    );
    expect(all.map((r) => r.status)).to.deep.equal([201, 201, 201]);
    expect(customersOf(u.organizationId)).to.have.length(1);
    expect(await entitlementOf(t), 'a checkout alone pays nothing').to.equal('FREE');
  });

  it('answers 409 for a lookup key with no active price, and opens the billing portal', async () => {
    const { stripe, config } = getStack();
    const t = await newTenant('bill-portal');
    const api = as(t.key);
    const unknown = await api.post('/api/billing/checkout-session', { price_lookup_key: 'no-such-price' });
    expect(unknown.status, unknown.text).to.equal(409);
    expect(unknown.body).to.deep.equal({
      type: 'ConflictError',
      errors: [{ message: 'The payment provider has no active price with the lookup key no-such-price' }],
    });
    const retired = `old_${Math.random().toString(36).slice(2)}`;
    stripe.addPrice({ lookupKey: retired, active: false });
    expect((await api.post('/api/billing/checkout-session', { price_lookup_key: retired })).status).to.equal(409);
    expect((await api.post('/api/billing/checkout-session', {})).status).to.equal(400);

    const portal = await api.post('/api/billing/management-url');
    expect(portal.status, portal.text).to.equal(201);
    const session = [...stripe.portalSessions.values()].find((s) => s.url === portal.body.billing_management_url)!;
    expect(session).to.include({
      customer: customersOf(t.organizationId)[0].id,
      return_url: config.billing!.returnUrl,
    });
    expect((await api.post('/api/billing/management-url')).status).to.equal(201);
    expect(customersOf(t.organizationId)).to.have.length(1);

    // A customer deleted at the provider meanwhile: the provider's refusal, quoted, as a 409.
    await getStack().ds.query(`UPDATE billing_customers SET customer_id = 'cus_gone' WHERE organization_id = $1`, [
      t.organizationId,
    ]);
    const gone = await api.post('/api/billing/management-url');
    expect(gone.status, gone.text).to.equal(409);
    expect(gone.body.errors[0].message).to.equal(
      "The payment provider refused the request: No such customer: 'cus_gone'",
    );
  });

  it("moves the organization's entitlement with signed billing events, once per event, in creation order", async () => {
    const { stripe, billingWebhookSecret: secret } = getStack();
    const t = await newTenant('bill-events');
    const bystander = await newTenant('bill-bystander');
    await as(t.key).post('/api/billing/management-url'); // creates the customer
    await as(bystander.key).post('/api/billing/management-url');
    const customer = customersOf(t.organizationId)[0].id;
    const base = Math.floor(Date.now() / 1000) - 100;
    const deliver = async (type: string, object: object, created: number, id?: string) => {
      const event = stripe.event(type, { customer, ...object }, { created, id });
      const res = await stripe.deliver(webhook(), event, secret);
      const body: any = await res.json();
      expect(res.status, JSON.stringify(body)).to.equal(200);
      return { event, body };
    };

    const paid = await deliver(
      'checkout.session.completed',
      { object: 'checkout.session', payment_status: 'paid' },
      base,
    );
    expect(paid.body).to.deep.equal({ received: true, duplicate: false, verdict: 'entitlement PAID (checkout paid)' });
    expect(await entitlementOf(t)).to.equal('PAID');

    const failed = await deliver('invoice.payment_failed', { object: 'invoice' }, base + 10);
    expect(failed.body.verdict).to.equal('entitlement UNPAID (payment failed)');
    expect(await entitlementOf(t)).to.equal('UNPAID');

    // The first event delivered again (Stripe retries): nothing happens again.
    const again = await stripe.deliver(webhook(), paid.event, secret);
    expect(await again.json()).to.deep.equal({
      received: true,
      duplicate: true,
      verdict: 'entitlement PAID (checkout paid)',
    });
    expect(await entitlementOf(t)).to.equal('UNPAID');

    // An event created before the one that set the entitlement, arriving late: ignored.
    const late = await deliver('customer.subscription.updated', { object: 'subscription', status: 'active' }, base + 5);
    expect(late.body.verdict).to.match(/^ignored: older than the event that set the entitlement/);
    expect(await entitlementOf(t)).to.equal('UNPAID');

    await deliver('customer.subscription.updated', { object: 'subscription', status: 'active' }, base + 20);
    expect(await entitlementOf(t)).to.equal('PAID');
    await deliver('customer.subscription.updated', { object: 'subscription', status: 'past_due' }, base + 30);
    expect(await entitlementOf(t)).to.equal('UNPAID');
    const ended = await deliver(
      'customer.subscription.deleted',
      { object: 'subscription', status: 'canceled' },
      base + 40,
    );
    expect(ended.body.verdict).to.equal('entitlement EXPIRED (subscription ended)');
    expect(await entitlementOf(t)).to.equal('EXPIRED');

    // Events that change nothing: another type, a checkout still unpaid, an unknown customer.
    expect((await deliver('customer.created', { object: 'customer' }, base + 50)).body.verdict).to.equal(
      'ignored: customer.created is not a billing event we act on',
    );
    expect(
      (await deliver('checkout.session.completed', { object: 'checkout.session', payment_status: 'unpaid' }, base + 50))
        .body.verdict,
    ).to.equal('ignored: checkout unpaid');
    const stranger = stripe.event('invoice.payment_failed', { object: 'invoice', customer: 'cus_nobody' });
    expect(((await (await stripe.deliver(webhook(), stranger, secret)).json()) as any).verdict).to.equal(
      'ignored: customer cus_nobody belongs to no organization',
    );
    expect(await entitlementOf(t)).to.equal('EXPIRED');
    expect(await entitlementOf(bystander), 'another organization is untouched').to.equal('FREE');
    const recorded = await getStack().ds.query(
      `SELECT count(*)::int AS n FROM billing_events WHERE organization_id = $1`,
      [t.organizationId],
    );
    expect(recorded[0].n, 'every event of its customer, with what it did').to.equal(7);
  });

  it('refuses events whose signature is missing, wrong, tampered with or too old (a replay)', async () => {
    const { stripe, billingWebhookSecret: secret, ds } = getStack();
    const t = await newTenant('bill-forged');
    await as(t.key).post('/api/billing/management-url');
    const customer = customersOf(t.organizationId)[0].id;
    const event = stripe.event('checkout.session.completed', {
      object: 'checkout.session',
      customer,
      payment_status: 'paid',
    });
    const payload = JSON.stringify(event);
    const attempts: Array<[string, Record<string, string>, string]> = [
      ['no signature', {}, payload],
      ['another secret', { 'stripe-signature': stripe.sign(payload, 'whsec_forged') }, payload],
      ['tampered payload', { 'stripe-signature': stripe.sign(payload, secret) }, payload.replace('paid', 'paid ')],
      [
        'signed 10 minutes ago',
        { 'stripe-signature': stripe.sign(payload, secret, Math.floor(Date.now() / 1000) - 600) },
        payload,
      ],
      ['garbage header', { 'stripe-signature': 'v1=abc' }, payload],
    ];
    for (const [what, headers, body] of attempts) {
      const res = await request('POST', '/api/billing/webhook', undefined, {
        raw: body,
        headers: { 'content-type': 'application/json', ...headers },
      });
      expect(res.status, `${what}: ${res.text}`).to.equal(401);
      expect(res.body.type).to.equal('UnauthorizedError');
    }
    expect(await entitlementOf(t)).to.equal('FREE');
    expect(await ds.query(`SELECT 1 FROM billing_events WHERE event_id = $1`, [event.id])).to.have.length(0);
    // The same event, properly signed now, is applied (the refusals recorded nothing).
    expect((await stripe.deliver(webhook(), event, secret)).status).to.equal(200);
    expect(await entitlementOf(t)).to.equal('PAID');
  });

  it('answers 503 where billing is not configured (everything else works on FREE) or the provider refuses our key', async () => {
    const s = getStack();
    const api = await startApi(s.env.client, 0, { ...s.config, billing: undefined });
    try {
      const t = await newTenant('bill-off');
      const client = as(t.key, api.baseUrl);
      const expected = {
        type: 'ServiceUnavailableError',
        errors: [
          {
            message:
              'Billing is not configured on this installation: the operator sets BILLING_SECRET_KEY ' +
              '(docs/connections-and-billing.md); every organization stays on the FREE entitlement',
          },
        ],
      };
      const checkout = await client.post('/api/billing/checkout-session', { price_lookup_key: 'pro' });
      expect(checkout.status, checkout.text).to.equal(503);
      expect(checkout.body).to.deep.equal(expected);
      expect((await client.post('/api/billing/management-url')).body).to.deep.equal(expected);
      const event = s.stripe.event('invoice.payment_failed', { object: 'invoice', customer: 'cus_x' });
      const hook = await s.stripe.deliver(`${api.baseUrl}/api/billing/webhook`, event, s.billingWebhookSecret);
      expect(hook.status).to.equal(503);
      expect(await entitlementOf(t)).to.equal('FREE');
      expect((await client.post('/api/secrets', { name: 'S', value: 'v' })).status).to.equal(201);
    } finally {
      await api.close();
    }
    // A key the provider refuses is the operator's problem: a 503 (the provider's 401 is not passed on).
    const wrongKey = { ...s.config.billing!, secretKey: 'sk_test_wrong' };
    const misconfigured = await startApi(s.env.client, 0, { ...s.config, billing: wrongKey });
    try {
      const t = await newTenant('bill-wrong-key');
      const res = await as(t.key, misconfigured.baseUrl).post('/api/billing/management-url');
      expect(res.status, res.text).to.equal(503);
      expect(res.body.errors[0].message).to.equal('The payment provider refused our key (BILLING_SECRET_KEY)');
    } finally {
      await misconfigured.close();
    }
  });
});
