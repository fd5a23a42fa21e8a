// People's sign-in (docs/people.md#sessions): POST /api/sessions by email and password, who is signed in,
// signing out of one session and everywhere, the lifetime of a session (idle and absolute, each on an api of
// its own with short settings), the one 401 for every bad sign-in, and sessions that end with their member.
import { expect } from 'chai';
import { addMember } from '../../src/services/accounts/accounts';
import { hashSecretToken } from '../../src/security/secret-tokens';
import { as } from '../harness/client';
import { Browser, PASSWORD, personWithPassword, setCookiesOf } from '../harness/people';
import { configWith, getStack, newTenant, startApi } from '../harness/stack';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

describe('sessions', function () {
  this.timeout(120_000);

  it('sign a person in: 201 with the user and the ends, an HttpOnly session cookie and a readable CSRF cookie', async () => {
    const person = await personWithPassword();
    const browser = new Browser();
    const before = Date.now();
    const signedIn = await browser.signIn(person.email.toUpperCase(), PASSWORD);
    expect(signedIn.status, signedIn.text).to.equal(201);
    expect(signedIn.headers.get('cache-control')).to.equal('no-store');
    const body = signedIn.body;
    expect(body.user).to.include({ user_id: person.userId, email: person.email });
    expect(body.user.organizations).to.deep.equal([person.organizationId]);
    expect(body.organization_id).to.equal(person.organizationId);
    // 7 days at most, 12 hours idle (the defaults).
    expect(Date.parse(body.expires_at) - before).to.be.closeTo(7 * 86_400_000, 60_000);
    expect(Date.parse(body.idle_expires_at) - before).to.be.closeTo(12 * 3_600_000, 60_000);
    // Nothing secret but the CSRF token, which the page needs anyway.
    expect(signedIn.text).not.to.match(/scrypt|password/i);

    const cookies = Object.fromEntries(setCookiesOf(signedIn).map((c) => [c.name, c]));
    expect(cookies.tarmac_session.attributes).to.include({ httponly: true, samesite: 'lax', path: '/' });
    expect(cookies.tarmac_session.attributes).not.to.have.property('secure'); // plain HTTP, no TLS proxy
    expect(Date.parse(cookies.tarmac_session.attributes.expires as string)).to.be.closeTo(
      Date.parse(body.expires_at),
      2_000,
    );
    expect(cookies.tarmac_csrf.attributes).to.include({ samesite: 'lax', path: '/' });
    expect(cookies.tarmac_csrf.attributes).not.to.have.property('httponly');
    expect(cookies.tarmac_csrf.value).to.equal(body.csrf_token);
    expect(cookies.tarmac_session.value).to.match(/^[A-Za-z0-9_-]{43}$/);

    const current = await browser.get('/api/sessions/current');
    expect(current.status, current.text).to.equal(200);
    expect(current.body).to.include({ session_id: body.session_id, organization_id: person.organizationId });
    expect(current.body).not.to.have.property('csrf_token');
    // Stored hashed only (SHA-256 of the 256-bit tokens).
    const [row] = await getStack().ds.query(`SELECT token_hash, csrf_hash FROM user_sessions WHERE session_id = $1`, [
      body.session_id,
    ]);
    expect(row.token_hash.equals(hashSecretToken(cookies.tarmac_session.value))).to.equal(true);
    expect(row.csrf_hash.equals(hashSecretToken(body.csrf_token))).to.equal(true);
  });

  it('set Secure cookies when the request came over HTTPS through the proxy (X-Forwarded-Proto)', async () => {
    const person = await personWithPassword();
    const signedIn = await new Browser().signIn(
      person.email,
      PASSWORD,
      {},
      {
        headers: { 'x-forwarded-proto': 'https' },
      },
    );
    expect(signedIn.status).to.equal(201);
    for (const cookie of setCookiesOf(signedIn)) expect(cookie.attributes.secure, cookie.name).to.equal(true);
  });

  it('sign out: the session ends, both cookies are cleared, and its cookie is refused from then on', async () => {
    const person = await personWithPassword();
    const browser = new Browser();
    await browser.signIn(person.email, PASSWORD);
    const token = browser.cookies.get('tarmac_session')!;
    const out = await browser.delete('/api/sessions/current');
    expect(out.status, out.text).to.equal(204);
    expect(setCookiesOf(out).map((c) => [c.name, c.value])).to.deep.equal([
      ['tarmac_session', ''],
      ['tarmac_csrf', ''],
    ]);
    expect(browser.cookies.size).to.equal(0);
    const replayed = await as(undefined).get('/api/sessions/current', {
      headers: { cookie: `tarmac_session=${token}` },
    });
    expect(replayed.status).to.equal(401);
    expect(replayed.body.errors[0].message).to.match(/session has ended or is unknown/);
    expect((await browser.get('/api/sessions/current')).status).to.equal(401);
  });

  it('sign out everywhere: every session of the user ends, in every organization; API keys keep working', async () => {
    const person = await personWithPassword();
    const other = await newTenant('other-org');
    await getStack().ds.transaction((em) => addMember(em, other.organizationId, person.userId, 'member'));
    const [laptop, phone, elsewhere] = [new Browser(), new Browser(), new Browser()];
    await laptop.signIn(person.email, PASSWORD);
    await phone.signIn(person.email, PASSWORD);
    expect((await elsewhere.signIn(person.email, PASSWORD, { organization_id: other.organizationId })).status).to.equal(
      201,
    );
    const stranger = await personWithPassword('stranger');
    const strangers = new Browser();
    await strangers.signIn(stranger.email, PASSWORD);

    const everywhere = await phone.delete('/api/sessions');
    expect(everywhere.status, everywhere.text).to.equal(204);
    for (const b of [laptop, phone, elsewhere]) expect((await b.get('/api/sessions/current')).status).to.equal(401);
    expect((await strangers.get('/api/sessions/current')).status).to.equal(200);
    expect((await as(person.key).get('/api/buckets')).status).to.equal(200);

    // A user's key can end them too (a stolen laptop); a key answers 404 for "the current session".
    await laptop.signIn(person.email, PASSWORD);
    expect((await as(person.key).get('/api/sessions/current')).status).to.equal(404);
    expect((await as(person.key).delete('/api/sessions')).status).to.equal(204);
    expect((await laptop.get('/api/sessions/current')).status).to.equal(401);
  });

  it('act in the oldest organization of the user, or the one named; another is 403', async () => {
    const person = await personWithPassword();
    const other = await newTenant('second-org');
    await getStack().ds.transaction((em) => addMember(em, other.organizationId, person.userId, 'member'));
    const first = new Browser();
    expect((await first.signIn(person.email, PASSWORD)).body.organization_id).to.equal(person.organizationId);
    const second = new Browser();
    const named = await second.signIn(person.email, PASSWORD, { organization_id: other.organizationId });
    expect(named.body.organization_id).to.equal(other.organizationId);
    // What each creates and lists is its organization's.
    const inFirst = await first.post('/api/buckets', { name: 'first' });
    const inSecond = await second.post('/api/buckets', { name: 'second' });
    expect(inFirst.body.organization_id).to.equal(person.organizationId);
    expect(inSecond.body.organization_id).to.equal(other.organizationId);
    expect((await second.get(`/api/buckets/${inFirst.body.bucket_id}`)).status).to.equal(404);
    expect((await first.get(`/api/buckets/${inFirst.body.bucket_id}`)).status).to.equal(200);
    const stranger = await newTenant('not-theirs');
    const refused = await new Browser().signIn(person.email, PASSWORD, { organization_id: stranger.organizationId });
    expect(refused.status).to.equal(403);
    expect(refused.body.errors[0].message).to.equal(`You are not a member of organization ${stranger.organizationId}`);
  });

  it('answer one 401 in about the same time for an unknown email, a wrong password and a user without one', async () => {
    const person = await personWithPassword();
    const passwordless = await newTenant('no-password');
    const tries = {
      unknown: () => new Browser().signIn(`nobody-${Date.now()}@example.test`, PASSWORD),
      wrong: () => new Browser().signIn(person.email, `${PASSWORD}!`),
      passwordless: () => new Browser().signIn(passwordless.email, PASSWORD),
    };
    const times: Record<string, number[]> = { unknown: [], wrong: [], passwordless: [] };
    const bodies = new Set<string>();
    for (let round = 0; round < 5; round++) {
      for (const [name, attempt] of Object.entries(tries)) {
        const started = process.hrtime.bigint();
        const reply = await attempt();
        times[name].push(Number(process.hrtime.bigint() - started) / 1e6);
        expect(reply.status, name).to.equal(401);
        expect(setCookiesOf(reply), name).to.deep.equal([]);
        bodies.add(reply.text);
      }
    }
    expect([...bodies]).to.deep.equal([
      JSON.stringify({ type: 'UnauthorizedError', errors: [{ message: 'The email or the password is wrong' }] }),
    ]);
    // Each refusal costs one scrypt (a dummy hash for the unknown email): the medians are within 2x of each other.
    const medians = Object.values(times).map(median);
    expect(Math.max(...medians) / Math.min(...medians), JSON.stringify(times)).to.be.below(2);
    expect(Math.min(...medians), 'a refusal costs one scrypt').to.be.above(5);
  });

  it('refuse bad input with {type, errors}', async () => {
    const b = new Browser();
    const missing = await b.post('/api/sessions', { email: 'a@example.test' });
    expect(missing.status).to.equal(400);
    expect(missing.body).to.deep.include({ type: 'ValidationError' });
    expect(missing.body.errors[0]).to.include({ path: '/body/password' });
    expect((await b.post('/api/sessions')).status).to.equal(400);
    const extra = await b.post('/api/sessions', { email: 'a@example.test', password: 'x', remember: true });
    expect(extra.status).to.equal(400);
    const badOrg = await b.post('/api/sessions', { email: 'a@example.test', password: 'x', organization_id: 'nope' });
    expect(badOrg.body.errors[0]).to.include({
      path: '/body/organization_id',
      message: '/body/organization_id must be a UUID',
    });
  });

  it('end when idle too long, and at their absolute end however much they are used', async () => {
    const idle = await startApi(getStack().env.client, 0, configWith({ SESSION_IDLE_TIMEOUT_SECONDS: '3' }));
    const capped = await startApi(
      getStack().env.client,
      0,
      configWith({ SESSION_IDLE_TIMEOUT_SECONDS: '3', SESSION_MAX_AGE_SECONDS: '3' }),
    );
    try {
      const person = await personWithPassword();
      const used = new Browser(idle.baseUrl);
      const left = new Browser(idle.baseUrl);
      await used.signIn(person.email, PASSWORD);
      const signedIn = await left.signIn(person.email, PASSWORD);
      expect(Date.parse(signedIn.body.idle_expires_at) - Date.parse(signedIn.body.created_at)).to.be.closeTo(3000, 50);
      // Used every second for 5 s: its idle end moves forward; the other, left alone, ends after 3 s.
      for (let i = 0; i < 5; i++) {
        await sleep(1000);
        expect((await used.get('/api/buckets')).status, `use ${i}`).to.equal(200);
      }
      expect((await left.get('/api/buckets')).status).to.equal(401);
      expect((await used.get('/api/sessions/current')).status).to.equal(200);

      const busy = new Browser(capped.baseUrl);
      const started = Date.now();
      await busy.signIn(person.email, PASSWORD);
      let status = 200;
      while (status === 200 && Date.now() - started < 10_000) {
        await sleep(500);
        status = (await busy.get('/api/buckets')).status;
      }
      expect(status).to.equal(401);
      expect(Date.now() - started).to.be.within(3000, 6000);
    } finally {
      await Promise.all([idle.close(), capped.close()]);
    }
  });

  it('stop at once when the member is removed or the user deleted', async () => {
    const owner = await newTenant('owner');
    const member = await personWithPassword('member');
    await getStack().ds.transaction((em) => addMember(em, owner.organizationId, member.userId, 'member'));
    const inOwners = new Browser();
    await inOwners.signIn(member.email, PASSWORD, { organization_id: owner.organizationId });
    const inOwn = new Browser();
    await inOwn.signIn(member.email, PASSWORD);
    expect((await inOwners.get('/api/buckets')).status).to.equal(200);
    const removed = await as(owner.key).delete(`/api/organizations/${owner.organizationId}/users/${member.userId}`);
    expect(removed.status).to.equal(204);
    expect((await inOwners.get('/api/buckets')).status).to.equal(401);
    expect((await inOwn.get('/api/buckets')).status).to.equal(200);

    await getStack().ds.query(`DELETE FROM users WHERE user_id = $1`, [member.userId]);
    expect((await inOwn.get('/api/buckets')).status).to.equal(401);
  });
});
