// A session serves the API (docs/people.md#sessions): the session cookie alone authenticates a request as its user
// in its organization; POST, PUT, PATCH and DELETE need the CSRF cookie's value in X-CSRF-Token (403 otherwise),
// and the token must be the session's own. API keys work as before: never asked for a CSRF token, and a key wins
// over a cookie.
import { expect } from 'chai';
import { as } from '../harness/client';
import { Browser, PASSWORD, personWithPassword } from '../harness/people';

async function signedIn() {
  const person = await personWithPassword();
  const browser = new Browser();
  const reply = await browser.signIn(person.email, PASSWORD);
  expect(reply.status, reply.text).to.equal(201);
  return { person, browser };
}

const CSRF_REFUSED = /needs the tarmac_csrf cookie's value in the X-CSRF-Token header/;

describe('requests with a session', function () {
  this.timeout(60_000);

  it('read and create resources as the user, in the organization of the session', async () => {
    const { person, browser } = await signedIn();
    const created = await browser.post('/api/buckets', { name: 'by cookie' });
    expect(created.status, created.text).to.equal(201);
    expect(created.body).to.include({ organization_id: person.organizationId, created_by: person.userId });
    const read = await browser.get(`/api/buckets/${created.body.bucket_id}`);
    expect(read.status).to.equal(200);
    expect(read.body.name).to.equal('by cookie');
    // The same bucket through the user's API key: one organization, two credentials.
    const byKey = await as(person.key).get(`/api/buckets/${created.body.bucket_id}`);
    expect(byKey.status).to.equal(200);
    const listed = await browser.get('/api/buckets');
    expect(listed.body.buckets.map((b: { bucket_id: string }) => b.bucket_id)).to.include(created.body.bucket_id);
    const users = await browser.get('/api/users');
    expect(users.body.users.map((u: { user_id: string }) => u.user_id)).to.deep.equal([person.userId]);
  });

  it('refuse an unsafe method without the CSRF token, with a wrong one, or with another session’s: 403, nothing done', async () => {
    const { person, browser } = await signedIn();
    const before = (await browser.get('/api/buckets')).body.pagination.total_count;

    const without = await browser.post('/api/buckets', { name: 'no token' }, { csrf: false });
    expect(without.status).to.equal(403);
    expect(without.body.type).to.equal('ForbiddenError');
    expect(without.body.errors[0].message).to.match(CSRF_REFUSED);

    const wrong = await browser.post('/api/buckets', { name: 'wrong token' }, { csrf: 'x'.repeat(43) });
    expect(wrong.status).to.equal(403);

    // Double submit with a planted pair (another session's CSRF cookie and header): not this session's token.
    const other = new Browser();
    await other.signIn(person.email, PASSWORD);
    const planted = await browser.post(
      '/api/buckets',
      { name: 'planted' },
      {
        csrf: other.csrf!,
        headers: { cookie: `tarmac_session=${browser.cookies.get('tarmac_session')}; tarmac_csrf=${other.csrf}` },
      },
    );
    expect(planted.status).to.equal(403);
    // The right header without the cookie it doubles is refused too.
    const headerOnly = await browser.post(
      '/api/buckets',
      { name: 'header only' },
      { headers: { cookie: `tarmac_session=${browser.cookies.get('tarmac_session')}` } },
    );
    expect(headerOnly.status).to.equal(403);

    for (const [method, path] of [
      ['DELETE', '/api/sessions/current'],
      ['PATCH', `/api/buckets/${person.organizationId}`],
      ['PUT', '/api/asset-data/00000000-0000-4000-8000-000000000000/a.txt'],
    ]) {
      const refused = await browser.send(method, path, undefined, { csrf: false });
      expect(refused.status, `${method} ${path}`).to.equal(403);
    }
    expect((await browser.get('/api/buckets')).body.pagination.total_count).to.equal(before);
    expect((await browser.get('/api/sessions/current')).status, 'the refused sign-out did not sign out').to.equal(200);

    const accepted = await browser.post('/api/buckets', { name: 'with token' });
    expect(accepted.status, accepted.text).to.equal(201);
  });

  it('leave API keys as they were: no CSRF token asked, and a key wins over a cookie', async () => {
    const { person, browser } = await signedIn();
    const key = as(person.key);
    const created = await key.post('/api/buckets', { name: 'by key' });
    expect(created.status).to.equal(201);
    const deleted = await key.delete(`/api/buckets/${created.body.bucket_id}`);
    expect(deleted.status).to.equal(204);
    // With a session cookie beside it (a browser calling with a key), the key is the credential: no CSRF.
    const both = await key.post(
      '/api/buckets',
      { name: 'key and cookie' },
      { headers: { cookie: `tarmac_session=${browser.cookies.get('tarmac_session')}` } },
    );
    expect(both.status, both.text).to.equal(201);
    // A bad key with a good cookie is a bad key.
    const badKey = await as('tmk_nope').get('/api/buckets', {
      headers: { cookie: `tarmac_session=${browser.cookies.get('tarmac_session')}` },
    });
    expect(badKey.status).to.equal(401);
    expect(badKey.body.errors[0].message).to.match(/API key is unknown/);
    // Neither: the 401 names both ways in.
    const none = await as(undefined).get('/api/buckets');
    expect(none.status).to.equal(401);
    expect(none.body.errors[0].message).to.match(/API key .* or session/);
  });

  it('answer 401 and clear the cookies for a cookie that names no session', async () => {
    const stale = await as(undefined).get('/api/buckets', { headers: { cookie: `tarmac_session=${'A'.repeat(43)}` } });
    expect(stale.status).to.equal(401);
    expect(stale.body.errors[0].message).to.match(/sign in again/);
    expect(stale.headers.getSetCookie().some((c) => c.startsWith('tarmac_session=;'))).to.equal(true);
  });
});
