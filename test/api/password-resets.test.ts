// One-time links that set a password (docs/people.md#password-reset-links): POST /api/password-resets/{token}
// sets it once, refuses the link again, refuses a short password or an expired link; `npm run admin --
// reset-password` prints a fresh link that works, and replaces older ones; a password set ends the sessions.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { createPasswordReset } from '../../src/services/accounts/password-resets';
import { request } from '../harness/client';
import { Browser, PASSWORD, personWithPassword } from '../harness/people';
import { getStack, newTenant } from '../harness/stack';

const ADMIN = path.resolve(__dirname, '../../src/cli/admin.js');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const setPassword = (token: string, password: string) => request('POST', `/api/password-resets/${token}`, { password });

/** `npm run admin -- <args>` on the stack's database; its stdout. */
async function admin(...args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [ADMIN, ...args], {
    env: {
      ...process.env,
      DATABASE_URL: (getStack().ds.options as { url: string }).url,
      PUBLIC_BASE_URL: getStack().baseUrl,
      LOG_LEVEL: 'silent',
    },
  });
  return stdout;
}

describe('password-reset links', function () {
  this.timeout(60_000);

  it('set the password once; the same link is refused afterwards', async () => {
    const tenant = await newTenant('new-person');
    const { token } = await createPasswordReset(getStack().ds, tenant.userId, 3600);
    expect((await new Browser().signIn(tenant.email, PASSWORD)).status, 'no password yet').to.equal(401);

    const set = await setPassword(token, PASSWORD);
    expect(set.status, set.text).to.equal(204);
    expect((await new Browser().signIn(tenant.email, PASSWORD)).status).to.equal(201);

    const again = await setPassword(token, 'another long password');
    expect(again.status).to.equal(404);
    expect(again.body).to.deep.equal({
      type: 'NotFoundError',
      errors: [
        {
          message:
            'This password-reset link is unknown, used or expired: ask for another (npm run admin -- reset-password --email <email>)',
        },
      ],
    });
    // The password is still the first one.
    expect((await new Browser().signIn(tenant.email, 'another long password')).status).to.equal(401);
    expect((await new Browser().signIn(tenant.email, PASSWORD)).status).to.equal(201);
    // Stored as scrypt's self-describing string, never as given.
    const [row] = await getStack().ds.query(`SELECT password_hash FROM users WHERE user_id = $1`, [tenant.userId]);
    expect(row.password_hash).to.match(/^\$scrypt\$ln=15,r=8,p=3\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
  });

  it('refuse a short password, a malformed token and an expired link with {type, errors}', async () => {
    const tenant = await newTenant('short');
    const { token } = await createPasswordReset(getStack().ds, tenant.userId, 3600);
    const short = await setPassword(token, 'eleven char');
    expect(short.status).to.equal(400);
    expect(short.body.errors[0]).to.deep.include({ path: '/body/password' });
    expect(short.body.errors[0].message).to.match(/fewer than 12 characters/);
    const malformed = await setPassword('not-a-token', PASSWORD);
    expect(malformed.status).to.equal(400);
    expect(malformed.body.errors[0].message).to.match(/^\/path\/token must be a password-reset link's token/);
    // The short password used nothing: the link still works.
    expect((await setPassword(token, PASSWORD)).status).to.equal(204);

    const expiring = await createPasswordReset(getStack().ds, tenant.userId, 1);
    await sleep(1_200);
    expect((await setPassword(expiring.token, PASSWORD)).status).to.equal(404);
  });

  it('end every session of the user when the password is set', async () => {
    const person = await personWithPassword();
    const browser = new Browser();
    await browser.signIn(person.email, PASSWORD);
    const { token } = await createPasswordReset(getStack().ds, person.userId, 3600);
    expect((await setPassword(token, 'a brand new passphrase')).status).to.equal(204);
    expect((await browser.get('/api/sessions/current')).status).to.equal(401);
    expect((await new Browser().signIn(person.email, PASSWORD)).status).to.equal(401);
    expect((await new Browser().signIn(person.email, 'a brand new passphrase')).status).to.equal(201);
  });

  it('are printed by `npm run admin -- reset-password`: a fresh link replaces the older one', async () => {
    const tenant = await newTenant('admin-reset');
    const older = await createPasswordReset(getStack().ds, tenant.userId, 3600);
    const out = await admin('reset-password', '--email', tenant.email.toUpperCase());
    expect(out).to.include(`user          ${tenant.userId}  ${tenant.email}`);
    const link = /(http\S+\/console\/set-password#token=([A-Za-z0-9_-]{43}))/.exec(out);
    expect(link, out).not.to.equal(null);
    expect(link![1].startsWith(`${getStack().baseUrl}/console/set-password#token=`)).to.equal(true);
    expect(out).to.include(`${getStack().baseUrl}/api/password-resets/${link![2]}`);

    expect((await setPassword(older.token, PASSWORD)).status, 'the older link').to.equal(404);
    expect((await setPassword(link![2], PASSWORD)).status).to.equal(204);
    expect((await new Browser().signIn(tenant.email, PASSWORD)).status).to.equal(201);

    const unknown = await admin('reset-password', '--email', 'nobody@example.test').catch((err) => err);
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.include('admin: No user has the email nobody@example.test');
  });
});
