// A person in the console (docs/console.md#signing-in, docs/people.md) in a real browser (browser.ts) against the
// real stack: follows the one-time link printed for a user, sets a password, signs in with it (a wrong one first),
// works in the organization through the cookie session (a create, so CSRF from the browser), and signs out.
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { createPasswordReset, passwordResetLink } from '../../src/services/accounts/password-resets';
import { as } from '../harness/client';
import { memberWithRole, PASSWORD } from '../harness/people';
import { getStack, newTenant } from '../harness/stack';
import { launchConsole, signedInConsole, signedInConsoleAs, type ConsoleBrowser } from './browser';

describe('console (browser): a person sets a password, signs in and out', function () {
  this.timeout(120_000);
  let c: ConsoleBrowser;
  let page: Page;
  let tenant: Awaited<ReturnType<typeof newTenant>>;
  let link: string;

  before(async () => {
    tenant = await newTenant('console-person');
    const { token } = await createPasswordReset(getStack().ds, tenant.userId, 3600);
    link = passwordResetLink(getStack().baseUrl, token);
    c = await launchConsole();
    page = c.page;
  });
  after(async () => {
    await c?.close();
  });

  it('sets the password from the link, the token read from the fragment and dropped from the address', async () => {
    await page.goto(link);
    await page.getByRole('heading', { name: 'Set your password' }).waitFor();
    expect(page.url()).to.not.include('token=');
    await page.getByLabel('New password', { exact: true }).fill(PASSWORD);
    await page.getByLabel('New password again').fill(`${PASSWORD}!`);
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByRole('alert').getByText('The two passwords differ').waitFor();
    await page.getByLabel('New password again').fill(PASSWORD);
    await c.accessible('set-password');
    await c.shot('20-set-password');
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByRole('status').getByText('Your password is set').waitFor();
  });

  it('says so when the link was already used (the API answers 404)', async () => {
    await page.goto('about:blank'); // else only the fragment changes, and the page is not loaded again
    await page.goto(link);
    await page.getByLabel('New password', { exact: true }).fill(PASSWORD);
    await page.getByLabel('New password again').fill(PASSWORD);
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByRole('alert').getByText('expired or was already used').waitFor();
  });

  it('signs in with email and password (a wrong one shows the API message), with no key in the browser', async () => {
    await page.goto(`${getStack().baseUrl}/console`);
    await page.getByLabel('Email').fill(tenant.email);
    await page.getByLabel('Password').fill('not the password at all');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('alert').getByText('The email or the password is wrong').waitFor();
    await c.accessible('sign-in-password');
    await c.shot('21-sign-in');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    expect(await page.evaluate('sessionStorage.length')).to.equal(0);
    expect(await page.evaluate('localStorage.length')).to.equal(0);
    const cookies = await page.context().cookies();
    expect(cookies.find((k) => k.name === 'tarmac_session')?.httpOnly).to.equal(true);
    // A reload keeps the session (the cookie), without asking again.
    await page.reload();
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
  });

  it('creates a bucket through the session (the CSRF header sent from the browser)', async () => {
    await page.getByRole('link', { name: 'Buckets', exact: true }).click();
    await page.getByLabel('Name').fill('person-notes');
    await page.getByRole('button', { name: 'Create bucket' }).click();
    await page.getByRole('heading', { name: 'person-notes' }).waitFor();
    const bucketId = page.url().split('/').pop()!;
    expect((await as(tenant.key).get(`/api/buckets/${bucketId}`)).status).to.equal(200);
  });

  it('signs out (the session ends) and is back at the sign-in form', async () => {
    const session = (await page.context().cookies()).find((k) => k.name === 'tarmac_session')!.value;
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Email').waitFor();
    const after = await as(undefined).get('/api/sessions/current', {
      headers: { cookie: `tarmac_session=${session}` },
    });
    expect(after.status).to.equal(401);
    await page.reload();
    await page.getByLabel('Email').waitFor();
    await c.shot('22-signed-out');
  });
});

describe('console (browser): a person with no account follows an invite link, sets a password and joins', function () {
  this.timeout(120_000);
  let c: ConsoleBrowser;
  let page: Page;

  before(async () => {
    c = await launchConsole();
    page = c.page;
  });
  after(async () => {
    await c?.close();
  });

  it('shows the invite, sets the password, joins and lands signed in; the used link says it was accepted', async () => {
    const org = await newTenant('console-inviter');
    const email = `invited-${Date.now()}@example.test`;
    const created = await as(org.key).post(`/api/organizations/${org.organizationId}/invites`, { email });
    expect(created.status, created.text).to.equal(201);
    const link = (created.body.accept_url as string).replace(/^https?:\/\/[^/]+/, getStack().baseUrl);

    await page.goto(link);
    await page.getByRole('heading', { name: 'Accept an invite' }).waitFor();
    await page.getByText(email).waitFor();
    expect(page.url()).to.not.include('token=');
    await page.getByLabel('Choose a password').fill(PASSWORD);
    await page.getByLabel('The password again').fill(`${PASSWORD}?`);
    await page.getByRole('button', { name: 'Set password and join' }).click();
    await page.getByRole('alert').getByText('The two passwords differ').waitFor();
    await page.getByLabel('The password again').fill(PASSWORD);
    await c.accessible('accept-invite');
    await c.shot('23-accept-invite');
    await page.getByRole('button', { name: 'Set password and join' }).click();
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    const members = await as(org.key).get(`/api/organizations/${org.organizationId}/users`);
    expect(members.body.users.map((u: { email: string }) => u.email)).to.include(email);

    await page.goto('about:blank');
    await page.goto(link);
    await page.getByRole('alert').getByText('This invite is accepted').waitFor();
  });
});

describe('console (browser): roles', function () {
  this.timeout(120_000);
  let owner: Awaited<ReturnType<typeof newTenant>>;
  let viewer: Awaited<ReturnType<typeof memberWithRole>>;
  let member: Awaited<ReturnType<typeof memberWithRole>>;
  const consoles: ConsoleBrowser[] = [];

  before(async () => {
    owner = await newTenant('console-roles');
    viewer = await memberWithRole(owner.organizationId, 'viewer');
    member = await memberWithRole(owner.organizationId, 'member');
  });
  after(async () => {
    for (const c of consoles) await c.close();
  });

  it('shows a viewer what it may read and no control to create, run or manage', async () => {
    const c = await signedInConsoleAs(viewer);
    consoles.push(c);
    await c.open('/structures');
    await c.page.getByRole('table', { name: 'Structures' }).waitFor();
    expect(await c.page.getByRole('button', { name: 'Create and deploy' }).count()).to.equal(0);
    const org = await as(owner.key).get(`/api/organizations/${owner.organizationId}`);
    await c.open(`/buckets/${org.body.default_bucket_id}`);
    await c.page.getByRole('heading', { name: 'Assets' }).waitFor();
    expect(await c.page.getByRole('heading', { name: 'Upload' }).count()).to.equal(0);
    await c.open('/settings');
    await c.page.getByText(`Signed in as ${viewer.email}, viewer of this organization.`).waitFor();
    await c.page.getByRole('heading', { name: 'Your API keys' }).waitFor();
    // The MCP endpoint's client configuration, to copy (docs/mcp.md).
    expect(JSON.parse(await c.page.getByLabel('Client configuration').inputValue())).to.deep.equal({
      mcpServers: {
        tarmac: {
          type: 'streamable-http',
          url: `${getStack().baseUrl}/mcp`,
          headers: { Authorization: 'Bearer <your API key>' },
        },
      },
    });
    const members = c.page.getByRole('table', { name: 'Members' });
    await members
      .getByRole('row', { name: new RegExp(member.email) })
      .getByRole('cell', { name: 'member', exact: true })
      .waitFor();
    expect(await c.page.getByRole('combobox').count()).to.equal(0); // no role to change, no invite to make
    expect(await c.page.getByRole('button', { name: 'Invite' }).count()).to.equal(0);
    await c.accessible('settings-viewer');
    await c.shot('24-settings-viewer');
  });

  it('lets an owner change a role and invite with one', async () => {
    const c = await signedInConsole(owner.key);
    consoles.push(c);
    await c.open('/settings');
    await c.page.getByLabel(`Role of ${member.email}`).selectOption('admin');
    const deadline = Date.now() + 10_000;
    let role = '';
    while (Date.now() < deadline && role !== 'admin') {
      const listed = await as(owner.key).get(`/api/organizations/${owner.organizationId}/members`);
      role = listed.body.members.find((m: { email: string }) => m.email === member.email).role;
      if (role !== 'admin') await new Promise((r) => setTimeout(r, 100));
    }
    expect(role).to.equal('admin');

    const email = `invited-viewer-${Date.now()}@example.test`;
    await c.page.getByLabel('Email to invite').fill(email);
    await c.page.getByLabel('As', { exact: true }).selectOption('viewer');
    await c.page.getByRole('button', { name: 'Invite', exact: true }).click();
    await c.page
      .getByRole('table', { name: 'Invites' })
      .getByRole('row', { name: new RegExp(email) })
      .getByRole('cell', { name: 'viewer', exact: true })
      .waitFor();
    await c.accessible('settings-owner');
    await c.shot('25-settings-owner');
  });
});
