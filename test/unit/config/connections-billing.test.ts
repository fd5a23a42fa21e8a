// Parsing of the connection (CODEHOST_OAUTH_*) and billing (BILLING_*) settings.
import { expect } from 'chai';
import { loadConfig } from '../../../src/config';
import { configProblems } from '../../support/config-problems';

const problems = configProblems;

describe('config: connections and billing', () => {
  it('leaves both off by default', () => {
    const config = loadConfig({});
    expect(config.codehostOAuth).to.equal(undefined);
    expect(config.billing).to.equal(undefined);
  });

  it('reads the code host OAuth app, both credentials or neither', () => {
    expect(
      loadConfig({ CODEHOST_OAUTH_CLIENT_ID: 'id', CODEHOST_OAUTH_CLIENT_SECRET: 's' }).codehostOAuth,
    ).to.deep.equal({ baseUrl: 'https://github.com', clientId: 'id', clientSecret: 's' });
    expect(
      loadConfig({
        CODEHOST_OAUTH_CLIENT_ID: 'id',
        CODEHOST_OAUTH_CLIENT_SECRET: 's',
        CODEHOST_OAUTH_BASE_URL: 'https://git.example.com/',
      }).codehostOAuth!.baseUrl,
    ).to.equal('https://git.example.com');
    expect(problems({ CODEHOST_OAUTH_CLIENT_ID: 'id' })).to.deep.equal([
      'CODEHOST_OAUTH_CLIENT_ID and CODEHOST_OAUTH_CLIENT_SECRET must be set together',
    ]);
  });

  it('turns billing on with a secret key; the API base URL gives host, port and protocol', () => {
    expect(loadConfig({ BILLING_SECRET_KEY: 'sk', PORT: '9000' }).billing).to.deep.equal({
      api: { host: 'api.stripe.com', port: 443, protocol: 'https' },
      secretKey: 'sk',
      webhookSecret: undefined,
      successUrl: 'http://localhost:9000',
      cancelUrl: 'http://localhost:9000',
      returnUrl: 'http://localhost:9000',
      timeoutMs: 30_000,
    });
    const local = loadConfig({
      BILLING_SECRET_KEY: 'sk',
      BILLING_API_BASE_URL: 'http://127.0.0.1:12111',
      BILLING_WEBHOOK_SECRET: 'whsec_x',
      BILLING_SUCCESS_URL: 'https://console.example.com/billing/done',
    }).billing!;
    expect(local.api).to.deep.equal({ host: '127.0.0.1', port: 12111, protocol: 'http' });
    expect(local).to.include({ webhookSecret: 'whsec_x', successUrl: 'https://console.example.com/billing/done' });
    expect(problems({ BILLING_SECRET_KEY: 'sk', BILLING_API_BASE_URL: 'https://api.example.com/v1' })).to.deep.equal([
      'BILLING_API_BASE_URL must be an http(s) URL without a path, got "https://api.example.com/v1"',
    ]);
    expect(problems({ BILLING_WEBHOOK_SECRET: 'whsec_x' })).to.deep.equal([
      'BILLING_WEBHOOK_SECRET is set but BILLING_SECRET_KEY is not',
    ]);
  });
});
