// The Stripe-compatible payment provider, through the official `stripe` package (its pinned API version).
// BILLING_API_BASE_URL points it elsewhere (host, port, protocol): a Stripe-compatible service, or the tests'
// local double (test/harness/stripe-double.ts).
import Stripe from 'stripe';
import type { BillingConfig } from '../../config';

const clients = new WeakMap<BillingConfig, Stripe>();

/** One client per configuration (it keeps its own connection pool). */
export function stripeClient(config: BillingConfig): Stripe {
  let client = clients.get(config);
  if (!client) {
    client = new Stripe(config.secretKey, {
      host: config.api.host,
      port: config.api.port,
      protocol: config.api.protocol,
      timeout: config.timeoutMs,
      // Retries of connection errors, 409 and 5xx, with the same Idempotency-Key (the package sends one).
      maxNetworkRetries: 2,
      appInfo: { name: 'tarmac' },
    });
    clients.set(config, client);
  }
  return client;
}

export { Stripe };
