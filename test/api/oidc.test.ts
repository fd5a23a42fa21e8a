// OIDC sign-in (docs/people.md#oidc-sign-in) against a real provider (the certified oidc-provider package,
// test/harness/oidc-provider.ts), through an api of its own with OIDC_ISSUER. A browser-like client follows the
// redirects between the two, keeping each one's cookies: the start, the provider's login and consent, the
// callback, the console. A user is found by a verified email, then by the provider's account; a new person of a
// sign-up domain gets a user; an unverified email, another domain, a callback this browser did not start and a
// tampered state are refused with their reason, and every callback is audited.
import { expect } from 'chai';
import { launchConsole } from '../console/browser';
import { startOidcProvider, type OidcProviderDouble } from '../harness/oidc-provider';
import { freePort } from '../harness/ports';
import { as } from '../harness/client';
import { configWith, getStack, newTenant, startApi } from '../harness/stack';

type Jars = Map<string, Map<string, string>>;

function keepCookies(jar: Map<string, string>, res: Response) {
  for (const line of res.headers.getSetCookie()) {
    const [pair, ...attrs] = line.split(';').map((s) => s.trim());
    const at = pair.indexOf('=');
    const [name, value] = [pair.slice(0, at), pair.slice(at + 1)];
    const expired = attrs.some((a) => /^max-age=0$/i.test(a) || /^expires=.*1970/i.test(a));
    if (expired || value === '') jar.delete(name);
    else jar.set(name, value);
  }
}

async function get(url: string, jars: Jars): Promise<Response> {
  const origin = new URL(url).origin;
  const jar = jars.get(origin) ?? new Map<string, string>();
  jars.set(origin, jar);
  const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  const res = await fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} });
  keepCookies(jar, res);
  return res;
}

/**
 * Follows a sign-in from the api's start until it is sent back to the console (or, with `untilCallback`, until
 * the provider sends it to the callback, which is not called).
 */
async function signIn(base: string, jars: Jars = new Map(), opts: { untilCallback?: boolean; from?: string } = {}) {
  let url = opts.from ?? `${base}/api/sessions/oidc?return_to=/console/runs`;
  for (let hop = 0; hop < 20; hop++) {
    const res = await get(url, jars);
    const location = res.headers.get('location');
    if (res.status < 300 || res.status >= 400 || !location) throw new Error(`${url} answered ${res.status}`);
    const next = new URL(location, url);
    if (opts.untilCallback && next.pathname === '/api/sessions/oidc/callback') return { landed: next, jars };
    if (next.origin === base && next.pathname.startsWith('/console')) return { landed: next, jars };
    url = next.href;
  }
  throw new Error('too many redirects');
}

const oidcError = (landed: URL) => decodeURIComponent(landed.hash.replace(/^#oidc_error=/, ''));

describe('OIDC sign-in', function () {
  this.timeout(60_000);
  let provider: OidcProviderDouble;
  let base: string;
  let api: Awaited<ReturnType<typeof startApi>>;

  before(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    provider = await startOidcProvider({ redirectUri: `${base}/api/sessions/oidc/callback` });
    const config = configWith({
      PUBLIC_BASE_URL: base,
      OIDC_ISSUER: provider.issuer,
      OIDC_CLIENT_ID: provider.clientId,
      OIDC_CLIENT_SECRET: provider.clientSecret,
      OIDC_NAME: 'Test IdP',
      OIDC_SIGNUP_DOMAINS: 'signup.test',
    });
    api = await startApi(getStack().env.client, port, config);
  });
  after(async () => {
    await api?.close();
    await provider?.close();
  });

  /** The session a browser's api cookies are (GET /api/sessions/current). */
  async function sessionOf(jars: Jars) {
    const jar = jars.get(base)!;
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(`${base}/api/sessions/current`, { headers: { cookie } });
    return { status: res.status, body: (await res.json()) as any };
  }

  it('says how people sign in; without OIDC_ISSUER there is no provider and no start', async () => {
    const methods = await fetch(`${base}/api/sign-in-methods`).then((r) => r.json());
    expect(methods).to.deep.equal({ password: true, oidc: { name: 'Test IdP', start_url: '/api/sessions/oidc' } });
    const plain = await as(undefined).get('/api/sign-in-methods');
    expect(plain.body).to.deep.equal({ password: true, oidc: null });
    const start = await as(undefined).get('/api/sessions/oidc');
    expect(start.status).to.equal(404);
    expect(start.body.type).to.equal('NotFoundError');
  });

  it('signs in an existing user by verified email, then by the provider account whatever email it says', async () => {
    const tenant = await newTenant('oidc-user');
    provider.signInAs({ sub: `sub-${tenant.userId}`, email: tenant.email.toUpperCase(), email_verified: true });
    const first = await signIn(base);
    expect(first.landed.pathname).to.equal('/console/runs');
    expect(first.landed.hash).to.equal('');
    const session = await sessionOf(first.jars);
    expect(session.status).to.equal(200);
    expect(session.body).to.include({ organization_id: tenant.organizationId, role: 'owner' });
    expect(session.body.user.user_id).to.equal(tenant.userId);

    provider.signInAs({ sub: `sub-${tenant.userId}`, email: 'changed@elsewhere.test', email_verified: false });
    const again = await signIn(base);
    expect((await sessionOf(again.jars)).body.user.user_id).to.equal(tenant.userId);

    const audit = await as(tenant.key).get('/api/audit-events?operation=CompleteOidcSignIn');
    expect(audit.body.audit_events.map((e: any) => [e.status, e.user_id])).to.deep.equal([
      [303, tenant.userId],
      [303, tenant.userId],
    ]);
    expect(audit.body.audit_events[1].detail).to.deep.equal({ email: tenant.email, issuer: provider.issuer });
  });

  it('refuses an unverified email: no session, the reason shown by the console', async () => {
    const tenant = await newTenant('oidc-unverified');
    provider.signInAs({ sub: `unverified-${tenant.userId}`, email: tenant.email, email_verified: false });
    const { landed, jars } = await signIn(base);
    expect(landed.pathname).to.equal('/console/');
    expect(oidcError(landed)).to.match(/no verified email/);
    expect(jars.get(base)?.has('tarmac_session')).to.equal(false);
  });

  it('signs up a person of an OIDC_SIGNUP_DOMAINS domain into the first organization; others need an invite', async () => {
    const email = `new-${Date.now()}@signup.test`;
    provider.signInAs({ sub: `new-${email}`, email, email_verified: true, name: 'New Person' });
    const { landed, jars } = await signIn(base);
    expect(landed.pathname, oidcError(landed)).to.equal('/console/runs');
    const session = await sessionOf(jars);
    expect(session.body.user).to.include({ email, name: 'New Person' });
    expect(session.body.role).to.equal('member');
    const [first] = await getStack().ds.query(
      `SELECT organization_id FROM organizations ORDER BY created_at, organization_id LIMIT 1`,
    );
    expect(session.body.organization_id).to.equal(first.organization_id);

    provider.signInAs({ sub: 'stranger', email: 'stranger@other.test', email_verified: true });
    const refused = await signIn(base);
    expect(oidcError(refused.landed)).to.match(/people of other\.test may not sign up: ask for an invite/);
    const [{ n }] = await getStack().ds.query(`SELECT count(*)::int AS n FROM users WHERE email = $1`, [
      'stranger@other.test',
    ]);
    expect(n).to.equal(0);
  });

  it("joins a new person by an invite's link: the provider's verified email must be the invite's", async () => {
    const org = await newTenant('oidc-inviter');
    const email = `invited-${Date.now()}@nowhere-allowed.test`;
    const made = await as(org.key).post(`/api/organizations/${org.organizationId}/invites`, { email, role: 'viewer' });
    expect(made.status, made.text).to.equal(201);
    const token = new URL(made.body.accept_url).hash.replace('#token=', '');

    /** The console's POST (the token in its body), then the browser sent to the provider's URL it answers. */
    async function join(account: { sub: string; email: string }) {
      provider.signInAs({ ...account, email_verified: true });
      const jars: Jars = new Map([[base, new Map()]]);
      const begun = await fetch(`${base}/api/sessions/oidc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ invite_token: token, return_to: '/console/dashboard' }),
      });
      expect(begun.status).to.equal(200);
      keepCookies(jars.get(base)!, begun);
      const { authorization_url } = (await begun.json()) as { authorization_url: string };
      expect(authorization_url).not.to.include(token);
      return signIn(base, jars, { from: authorization_url });
    }

    const wrong = await join({ sub: 'someone-else', email: 'someone-else@nowhere-allowed.test' });
    expect(oidcError(wrong.landed)).to.equal(
      `This invite is for ${email}; the OIDC provider signed you in as someone-else@nowhere-allowed.test`,
    );
    const joined = await join({ sub: `invited-${email}`, email });
    expect(joined.landed.pathname, oidcError(joined.landed)).to.equal('/console/dashboard');
    const session = await sessionOf(joined.jars);
    expect(session.body).to.include({ organization_id: org.organizationId, role: 'viewer' });
    expect(session.body.user.email).to.equal(email);
    expect((await as(org.key).get(`/api/invites/${made.body.invite_id}`)).body.status).to.equal('ACCEPTED');
  });

  it('signs in from the console in a real browser, and shows a refusal on the sign-in page', async () => {
    const tenant = await newTenant('oidc-console');
    provider.signInAs({ sub: `console-${tenant.userId}`, email: tenant.email, email_verified: true });
    const c = await launchConsole();
    try {
      await c.page.goto(`${base}/console/runs`);
      await c.page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
      await c.page.getByRole('heading', { name: 'Runs' }).waitFor();
      expect(new URL(c.page.url()).pathname).to.equal('/console/runs');
      await c.page.getByRole('button', { name: 'Sign out' }).click();

      // Signed out here, and at the provider too (its session would sign the same account in again).
      await c.page.context().clearCookies();
      provider.signInAs({ sub: 'console-stranger', email: 'someone@other.test', email_verified: true });
      await c.page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
      await c.page
        .getByRole('alert')
        .getByText(/may not sign up: ask for an invite/)
        .waitFor();
      expect(new URL(c.page.url()).hash).to.equal(''); // the reason is dropped from the address once shown
      await c.accessible('sign-in-oidc');
      await c.shot('26-sign-in-oidc-refused');
    } finally {
      await c.close();
    }
  });

  it('refuses a callback this browser did not start, and one whose state was changed', async () => {
    const tenant = await newTenant('oidc-forged');
    provider.signInAs({ sub: `forged-${tenant.userId}`, email: tenant.email, email_verified: true });
    const { landed: callback, jars } = await signIn(base, new Map(), { untilCallback: true });

    // Another browser (no tarmac_oidc cookie) brings the code: a login CSRF is refused.
    const elsewhere: Jars = new Map();
    const stolen = await get(callback.href, elsewhere);
    expect(stolen.status).to.equal(303);
    expect(oidcError(new URL(stolen.headers.get('location')!, base))).to.match(/not started in this browser/);
    expect(elsewhere.get(base)?.has('tarmac_session')).to.equal(false);

    const tampered = new URL(callback);
    tampered.searchParams.set('state', 'not-the-state');
    const changed = await get(tampered.href, jars);
    expect(oidcError(new URL(changed.headers.get('location')!, base))).to.match(/could not be completed/);
    expect(jars.get(base)?.has('tarmac_session')).to.equal(false);
  });
});
