// The code host's OAuth app (connections) and the Stripe-compatible payment provider (billing):
// docs/connections-and-billing.md.
import type { EnvReader } from './env';

export interface BillingConfig {
  /** The provider's API: host, port and protocol of BILLING_API_BASE_URL (https://api.stripe.com by default). */
  api: { host: string; port: number; protocol: 'http' | 'https' };
  secretKey: string;
  /** Verifies the signature of billing events; without it the billing webhook refuses every event. */
  webhookSecret: string | undefined;
  /** Where checkout sends the user back (success, cancel) and where the billing portal returns to. */
  successUrl: string;
  cancelUrl: string;
  returnUrl: string;
  /** Per request to the provider. */
  timeoutMs: number;
}

export interface ConnectionsBillingSettings {
  /**
   * The code host's OAuth app, for connections (`credentials.codehost.auth_code` is exchanged at
   * `<baseUrl>/login/oauth/access_token`). Undefined: connections cannot be created (documented error).
   */
  codehostOAuth: { baseUrl: string; clientId: string; clientSecret: string } | undefined;
  /** The Stripe-compatible payment provider (docs/connections-and-billing.md). Undefined: billing answers 503. */
  billing: BillingConfig | undefined;
}

export function readConnectionsBilling(env: EnvReader, publicBaseUrl: string): ConnectionsBillingSettings {
  return { codehostOAuth: readCodehostOAuth(env), billing: readBilling(env, publicBaseUrl) };
}

/** CODEHOST_OAUTH_CLIENT_ID and _SECRET together (one without the other is a mistake worth stopping for). */
function readCodehostOAuth(env: EnvReader): ConnectionsBillingSettings['codehostOAuth'] {
  const clientId = env.optional('CODEHOST_OAUTH_CLIENT_ID');
  const clientSecret = env.optional('CODEHOST_OAUTH_CLIENT_SECRET');
  const baseUrl = env.url('CODEHOST_OAUTH_BASE_URL', 'https://github.com');
  if (!clientId && !clientSecret) return undefined;
  if (!clientId || !clientSecret) {
    env.problem('CODEHOST_OAUTH_CLIENT_ID and CODEHOST_OAUTH_CLIENT_SECRET must be set together');
    return undefined;
  }
  return { baseUrl, clientId, clientSecret };
}

/** BILLING_SECRET_KEY turns billing on; the other BILLING_* settings have defaults. */
function readBilling(env: EnvReader, publicBaseUrl: string): BillingConfig | undefined {
  const secretKey = env.optional('BILLING_SECRET_KEY');
  const base = env.url('BILLING_API_BASE_URL', 'https://api.stripe.com');
  const successUrl = env.url('BILLING_SUCCESS_URL') ?? publicBaseUrl;
  const cancelUrl = env.url('BILLING_CANCEL_URL') ?? publicBaseUrl;
  const returnUrl = env.url('BILLING_RETURN_URL') ?? publicBaseUrl;
  const timeoutMs = env.int('BILLING_TIMEOUT_MS', 30_000, 100, 600_000);
  const webhookSecret = env.optional('BILLING_WEBHOOK_SECRET');
  if (!secretKey) {
    if (webhookSecret) env.problem('BILLING_WEBHOOK_SECRET is set but BILLING_SECRET_KEY is not');
    return undefined;
  }
  return { api: billingApi(env, base), secretKey, webhookSecret, successUrl, cancelUrl, returnUrl, timeoutMs };
}

function billingApi(env: EnvReader, base: string): BillingConfig['api'] {
  const u = URL.canParse(base) ? new URL(base) : undefined;
  if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:') || u.pathname !== '/' || u.search) {
    env.problem(`BILLING_API_BASE_URL must be an http(s) URL without a path, got ${JSON.stringify(base)}`);
    return { host: 'api.stripe.com', port: 443, protocol: 'https' };
  }
  const protocol = u.protocol === 'http:' ? 'http' : 'https';
  return { host: u.hostname, port: u.port ? Number(u.port) : protocol === 'http' ? 80 : 443, protocol };
}
