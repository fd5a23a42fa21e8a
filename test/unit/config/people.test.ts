// People's settings (src/config/people.ts): session lifetimes (12 h idle, 7 days at most; idle never past the
// maximum), the password-reset link's lifetime, SIGN_IN_RATE_LIMITS (on unless `off`, items over the defaults),
// and the OIDC provider (all three of issuer, client id and secret or none; https, or http on localhost only).
import { expect } from 'chai';
import { loadConfig } from '../../../src/config';
import { DEFAULT_SIGN_IN_LIMITS } from '../../../src/security/rate-limit-rules';
import { configProblems } from '../../support/config-problems';

describe('config: people', () => {
  it('keeps sessions 12 h idle and 7 days at most, reset links 24 h, and limits sign-ins by default', () => {
    const config = loadConfig({});
    expect(config.sessions).to.deep.equal({ idleTimeoutSeconds: 43_200, maxAgeSeconds: 604_800 });
    expect(config.passwordResetTtlSeconds).to.equal(86_400);
    expect(config.signInLimits).to.deep.equal(DEFAULT_SIGN_IN_LIMITS);
  });

  it('never lets the idle timeout outlast the maximum age', () => {
    const config = loadConfig({ SESSION_MAX_AGE_SECONDS: '3600', SESSION_IDLE_TIMEOUT_SECONDS: '7200' });
    expect(config.sessions).to.deep.equal({ idleTimeoutSeconds: 3600, maxAgeSeconds: 3600 });
  });

  it('reads SIGN_IN_RATE_LIMITS: off, or buckets over the defaults', () => {
    expect(loadConfig({ SIGN_IN_RATE_LIMITS: 'off' }).signInLimits).to.equal(undefined);
    expect(loadConfig({ SIGN_IN_RATE_LIMITS: 'on' }).signInLimits).to.deep.equal(DEFAULT_SIGN_IN_LIMITS);
    expect(loadConfig({ SIGN_IN_RATE_LIMITS: 'account=5/m,address=off' }).signInLimits).to.deep.equal({
      account: { capacity: 5, perSecond: 5 / 60 },
    });
  });

  it('names the variable of a bad value', () => {
    expect(configProblems({ SIGN_IN_RATE_LIMITS: 'key=5/m' })[0]).to.match(
      /^SIGN_IN_RATE_LIMITS: "key=5\/m" is not <bucket>=<requests>\/<period> or <bucket>=off \(buckets: address, account;/,
    );
    expect(configProblems({ SESSION_IDLE_TIMEOUT_SECONDS: '0' })[0]).to.include('SESSION_IDLE_TIMEOUT_SECONDS');
    expect(configProblems({ PASSWORD_RESET_TTL_SECONDS: '10' })[0]).to.include('PASSWORD_RESET_TTL_SECONDS');
  });

  it('reads the OIDC provider: all three settings or none, https or http on localhost', () => {
    expect(loadConfig({}).oidc).to.equal(undefined);
    const full = { OIDC_ISSUER: 'https://id.example.com', OIDC_CLIENT_ID: 'tarmac', OIDC_CLIENT_SECRET: 's' };
    expect(loadConfig({ ...full, OIDC_SIGNUP_DOMAINS: 'Example.com, example.org' }).oidc).to.deep.equal({
      issuer: 'https://id.example.com',
      clientId: 'tarmac',
      clientSecret: 's',
      name: 'SSO',
      signupDomains: ['example.com', 'example.org'],
      signupRole: 'member',
    });
    expect(loadConfig({ ...full, OIDC_ISSUER: 'http://localhost:5556/dex' }).oidc?.issuer).to.equal(
      'http://localhost:5556/dex',
    );
    expect(configProblems({ OIDC_ISSUER: 'https://id.example.com' })[0]).to.match(/needs all three/);
    expect(configProblems({ ...full, OIDC_ISSUER: 'http://id.example.com' })[0]).to.match(/must be an https/);
    expect(configProblems({ ...full, OIDC_SIGNUP_ROLE: 'owner!' })[0]).to.match(/OIDC_SIGNUP_ROLE must be one of/);
  });
});
