/**
 * A local Stripe for tests (node:http), speaking Stripe's REST wire protocol as the official `stripe` package
 * uses it: `Authorization: Bearer <secret key>`, form-encoded bodies with bracket notation
 * (`line_items[0][price]=...`, `metadata[k]=v`), `Idempotency-Key` (a replay answers the first answer, with
 * `Idempotent-Replayed: true`), JSON objects with `object` and `id` prefixes, lists
 * `{object: 'list', data, has_more, url}`, and errors `{error: {type, code, message, param, doc_url}}` with a
 * `Request-Id` header. Served: GET /v1/prices (lookup_keys, active, limit), POST /v1/customers,
 * POST /v1/checkout/sessions, POST /v1/billing_portal/sessions. And the other direction: events signed the way
 * Stripe signs webhooks (`Stripe-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<payload>">`), delivered
 * with `deliver`.
 *
 *   const stripe = await startStripeDouble({ secretKey: 'sk_test_x' });
 *   stripe.addPrice({ lookupKey: 'pro_monthly', recurring: true });
 *   const event = stripe.event('customer.subscription.updated', { ...subscription });
 *   await stripe.deliver(webhookUrl, event, webhookSecret);       // → the receiver's Response
 *   stripe.requests;                                              // every API request (method, path, params)
 */
import { createHmac, randomBytes } from 'node:crypto';
import http from 'node:http';
import type net from 'node:net';

export interface StripeRequest {
  method: string;
  path: string;
  params: Record<string, any>;
  idempotencyKey: string | undefined;
  stripeVersion: string | undefined;
}

type Obj = Record<string, any>;

export interface StripeDouble {
  baseUrl: string;
  secretKey: string;
  addPrice(p: { lookupKey: string; recurring?: boolean; unitAmount?: number; active?: boolean }): Obj;
  customers: Map<string, Obj>;
  checkoutSessions: Map<string, Obj>;
  portalSessions: Map<string, Obj>;
  requests: StripeRequest[];
  /** An event as Stripe sends it (`evt_...`, `created` now unless given). */
  event(type: string, object: Obj, opts?: { id?: string; created?: number }): Obj;
  /** The Stripe-Signature header for a payload (timestamp: now unless given). */
  sign(payload: string, secret: string, timestamp?: number): string;
  /** POSTs the event to a webhook endpoint as Stripe does; `signature` overrides the header. */
  deliver(
    url: string,
    event: Obj,
    secret: string,
    opts?: { timestamp?: number; signature?: string },
  ): Promise<Response>;
  close(): Promise<void>;
}

const id = (prefix: string) => `${prefix}_${randomBytes(12).toString('base64url').replace(/[-_]/g, 'x')}`;
const now = () => Math.floor(Date.now() / 1000);

/** `a[b][0][c]=v` → {a: {b: [{c: 'v'}]}} (Stripe's form encoding, which the package writes with `qs`). */
export function decodeForm(text: string): Obj {
  const root: Obj = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const path = [key.replace(/\[.*$/, ''), ...[...key.matchAll(/\[([^\]]*)\]/g)].map((m) => m[1])];
    let at: Obj = root;
    path.forEach((seg, i) => {
      if (i === path.length - 1) at[seg] = value;
      else at = at[seg] ??= {};
    });
  }
  const arrays = (v: any): any => {
    if (typeof v !== 'object' || v === null) return v;
    const keys = Object.keys(v);
    const out = Object.fromEntries(keys.map((k) => [k, arrays(v[k])]));
    return keys.length && keys.every((k) => /^\d+$/.test(k)) ? keys.sort((a, b) => +a - +b).map((k) => out[k]) : out;
  };
  return arrays(root);
}

class StripeError extends Error {
  constructor(
    readonly status: number,
    readonly body: Obj,
  ) {
    super(body.message);
  }
}
const missing = (what: string, value: string, param: string) =>
  new StripeError(400, {
    type: 'invalid_request_error',
    code: 'resource_missing',
    message: `No such ${what}: '${value}'`,
    param,
    doc_url: 'https://stripe.com/docs/error-codes/resource-missing',
  });
const required = (param: string) =>
  new StripeError(400, {
    type: 'invalid_request_error',
    code: 'parameter_missing',
    message: `Missing required param: ${param}.`,
    param,
    doc_url: 'https://stripe.com/docs/error-codes/parameter-missing',
  });

export async function startStripeDouble(opts: { secretKey?: string } = {}): Promise<StripeDouble> {
  const secretKey = opts.secretKey ?? `sk_test_${randomBytes(12).toString('hex')}`;
  const prices = new Map<string, Obj>();
  const customers = new Map<string, Obj>();
  const checkoutSessions = new Map<string, Obj>();
  const portalSessions = new Map<string, Obj>();
  const idempotent = new Map<string, { status: number; body: Obj }>();
  const requests: StripeRequest[] = [];
  let baseUrl = '';

  const routes: Record<string, (p: Obj) => Obj> = {
    'GET /v1/prices': (p) => {
      const keys: string[] | undefined = p.lookup_keys;
      let data = [...prices.values()].filter((x) => !keys || keys.includes(x.lookup_key));
      if (p.active !== undefined) data = data.filter((x) => String(x.active) === p.active);
      const limit = p.limit ? Number(p.limit) : 10;
      return { object: 'list', data: data.slice(0, limit), has_more: data.length > limit, url: '/v1/prices' };
    },
    'POST /v1/customers': (p) => {
      const c = {
        id: id('cus'),
        object: 'customer',
        created: now(),
        email: p.email ?? null,
        livemode: false,
        metadata: p.metadata ?? {},
        name: p.name ?? null,
        balance: 0,
        delinquent: false,
        invoice_settings: { custom_fields: null, default_payment_method: null, footer: null },
      };
      customers.set(c.id, c);
      return c;
    },
    'POST /v1/checkout/sessions': (p) => {
      if (!p.mode) throw required('mode');
      if (p.customer && !customers.has(p.customer)) throw missing('customer', p.customer, 'customer');
      const items: Obj[] = p.line_items ?? [];
      if (!items.length) throw required('line_items');
      items.forEach((li, i) => {
        if (![...prices.values()].some((x) => x.id === li.price))
          throw missing('price', li.price, `line_items[${i}][price]`);
      });
      const s = {
        id: id('cs_test'),
        object: 'checkout.session',
        created: now(),
        expires_at: now() + 86_400,
        client_reference_id: p.client_reference_id ?? null,
        customer: p.customer ?? null,
        mode: p.mode,
        status: 'open',
        payment_status: 'unpaid',
        success_url: p.success_url ?? null,
        cancel_url: p.cancel_url ?? null,
        metadata: p.metadata ?? {},
        livemode: false,
        subscription: null,
        line_items_requested: items,
        subscription_data_requested: p.subscription_data ?? null,
        url: '',
      };
      s.url = `${baseUrl}/c/pay/${s.id}`;
      checkoutSessions.set(s.id, s);
      return s;
    },
    'POST /v1/billing_portal/sessions': (p) => {
      if (!p.customer) throw required('customer');
      if (!customers.has(p.customer)) throw missing('customer', p.customer, 'customer');
      const s = {
        id: id('bps'),
        object: 'billing_portal.session',
        created: now(),
        customer: p.customer,
        livemode: false,
        return_url: p.return_url ?? null,
        url: '',
      };
      s.url = `${baseUrl}/p/session/${s.id}`;
      portalSessions.set(s.id, s);
      return s;
    },
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const send = (status: number, body: Obj, extra: Record<string, string> = {}) => {
        res.writeHead(status, {
          'content-type': 'application/json',
          'request-id': id('req'),
          'stripe-version': String(req.headers['stripe-version'] ?? '2026-10-28.endive'),
          ...extra,
        });
        res.end(JSON.stringify(body, null, 2));
      };
      if (req.headers.authorization !== `Bearer ${secretKey}`) {
        const shown = String(req.headers.authorization ?? '').replace(/^Bearer (.{8}).*/, '$1****');
        return send(401, {
          error: { type: 'invalid_request_error', message: `Invalid API Key provided: ${shown || '(none)'}` },
        });
      }
      const params = decodeForm(req.method === 'GET' ? url.search.slice(1) : Buffer.concat(chunks).toString('utf8'));
      const idempotencyKey = req.headers['idempotency-key'] as string | undefined;
      requests.push({
        method: req.method ?? '',
        path: url.pathname,
        params,
        idempotencyKey,
        stripeVersion: req.headers['stripe-version'] as string | undefined,
      });
      const handler = routes[`${req.method} ${url.pathname}`];
      if (!handler) {
        return send(404, {
          error: {
            type: 'invalid_request_error',
            message: `Unrecognized request URL (${req.method}: ${url.pathname}).`,
          },
        });
      }
      const replayKey = req.method === 'POST' && idempotencyKey ? `${url.pathname} ${idempotencyKey}` : undefined;
      const replay = replayKey ? idempotent.get(replayKey) : undefined;
      if (replay) return send(replay.status, replay.body, { 'idempotent-replayed': 'true' });
      let status = 200;
      let body: Obj;
      try {
        body = handler(params);
      } catch (err) {
        if (!(err instanceof StripeError)) throw err;
        status = err.status;
        body = { error: err.body };
      }
      if (replayKey) idempotent.set(replayKey, { status, body });
      send(status, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;

  const sign = (payload: string, secret: string, timestamp = now()) =>
    `t=${timestamp},v1=${createHmac('sha256', secret).update(`${timestamp}.${payload}`, 'utf8').digest('hex')}`;

  return {
    baseUrl,
    secretKey,
    addPrice({ lookupKey, recurring = true, unitAmount = 2000, active = true }) {
      const price = {
        id: id('price'),
        object: 'price',
        active,
        billing_scheme: 'per_unit',
        created: now(),
        currency: 'usd',
        livemode: false,
        lookup_key: lookupKey,
        metadata: {},
        nickname: null,
        product: id('prod'),
        recurring: recurring
          ? { interval: 'month', interval_count: 1, meter: null, trial_period_days: null, usage_type: 'licensed' }
          : null,
        tax_behavior: 'unspecified',
        type: recurring ? 'recurring' : 'one_time',
        unit_amount: unitAmount,
        unit_amount_decimal: String(unitAmount),
      };
      prices.set(price.id, price);
      return price;
    },
    customers,
    checkoutSessions,
    portalSessions,
    requests,
    event: (type, object, o = {}) => ({
      id: o.id ?? id('evt'),
      object: 'event',
      api_version: '2026-10-28.endive',
      created: o.created ?? now(),
      data: { object },
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      type,
    }),
    sign,
    async deliver(url, event, secret, o = {}) {
      const payload = JSON.stringify(event, null, 2);
      return fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json; charset=utf-8',
          'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
          'stripe-signature': o.signature ?? sign(payload, secret, o.timestamp),
        },
        body: payload,
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
