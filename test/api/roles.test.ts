// Roles (docs/people.md#roles) through the API. A walk of every operation in the OpenAPI document with a key of
// each role checks the answer against the route builder's table (the document's `x-tarmac-role`): below it,
// 403 saying which role is needed; at or above it, anything else. Then what the table cannot say: members
// listed and their roles changed, no one acting above their own role, the last owner kept, a role change
// reaching keys and sessions at once, invites and organization keys with a role, and the audit log's readers.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { operationsInRoleTable } from '../../src/api/http/route-roles';
import { ROLES, type Role } from '../../src/services/accounts/roles';
import { as } from '../harness/client';
import { Browser, memberWithRole, PASSWORD, setPasswordOf } from '../harness/people';
import { getStack, newTenant } from '../harness/stack';

const ROLE_REFUSAL = /needs the (viewer|member|admin|owner) role or above; this credential acts as/;

/** A path of the document with every parameter filled: unknown ids, so that nothing the walk calls exists. */
function filled(path: string): string {
  return path.replace(/\{(\w+)\}/g, (_m, name: string) =>
    name.endsWith('_id') ? randomUUID() : name === 'token' ? 'x'.repeat(43) : 'walk',
  );
}

/** Status and, for a 403, the first error's message; a streaming answer is not read past its headers. */
async function call(method: string, path: string, key: string): Promise<{ status: number; message?: string }> {
  const abort = new AbortController();
  const hasBody = method === 'POST' || method === 'PATCH' || method === 'PUT';
  const res = await fetch(`${getStack().baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(hasBody ? { 'content-type': 'application/json' } : {}) },
    body: hasBody ? '{}' : undefined,
    signal: abort.signal,
  });
  if (res.status !== 403) {
    abort.abort();
    return { status: res.status };
  }
  const body = (await res.json()) as { errors: Array<{ message: string }> };
  return { status: 403, message: body.errors[0]?.message };
}

const rank = (r: Role) => ROLES.indexOf(r);

describe('roles', function () {
  this.timeout(240_000);

  it('every operation answers each role as the table says', async () => {
    const owner = await newTenant('walk-owner');
    const keys: Record<Role, string> = { owner: owner.key } as Record<Role, string>;
    for (const role of ['admin', 'member', 'viewer'] as const)
      keys[role] = (await memberWithRole(owner.organizationId, role)).key;
    const doc = (await as(owner.key).get('/api/openapi.json')).body;

    const wrong: string[] = [];
    let walked = 0;
    for (const [path, methods] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(methods)) {
        if (op.security?.length === 0) {
          if (op['x-tarmac-role'] !== undefined) wrong.push(`${op.operationId} is public but names a role`);
          continue;
        }
        const needed = op['x-tarmac-role'] as Role;
        if (!ROLES.includes(needed)) {
          wrong.push(`${op.operationId} names no role`);
          continue;
        }
        for (const role of ROLES) {
          const answer = await call(method.toUpperCase(), filled(path), keys[role]);
          walked++;
          const refused = answer.status === 403 && ROLE_REFUSAL.test(answer.message ?? '');
          if (rank(role) < rank(needed) && !refused)
            wrong.push(`${op.operationId} as ${role} answered ${answer.status}, not the refusal (needs ${needed})`);
          if (rank(role) >= rank(needed) && refused)
            wrong.push(`${op.operationId} as ${role} was refused: ${answer.message}`);
        }
      }
    }
    expect(wrong).to.deep.equal([]);
    expect(walked).to.be.greaterThan(800);

    // The table names operations that exist, and the walk saw what it says.
    const operations = new Set(
      Object.values<Record<string, any>>(doc.paths).flatMap((m) => Object.values<any>(m).map((o) => o.operationId)),
    );
    expect(operationsInRoleTable().filter((o) => !operations.has(o))).to.deep.equal([]);
    const roleOf = (id: string) =>
      Object.values<Record<string, any>>(doc.paths)
        .flatMap((m) => Object.values<any>(m))
        .find((o) => o.operationId === id)['x-tarmac-role'];
    expect([
      roleOf('ListStructures'),
      roleOf('CreateStructure'),
      roleOf('CreateSecret'),
      roleOf('CreateCheckoutSession'),
    ]).to.deep.equal(['viewer', 'member', 'admin', 'owner']);
  });

  it('a viewer reads, a member creates and runs, an admin manages secrets and keys, an owner billing', async () => {
    const owner = await newTenant('abilities');
    const viewer = as((await memberWithRole(owner.organizationId, 'viewer')).key);
    const member = as((await memberWithRole(owner.organizationId, 'member')).key);
    const admin = as((await memberWithRole(owner.organizationId, 'admin')).key);

    const made = await member.post('/api/structures', { name: 'by a member' });
    expect(made.status, made.text).to.equal(201);
    expect((await viewer.get(`/api/structures/${made.body.structure_id}`)).status).to.equal(200);
    const refused = await viewer.post('/api/structures', { name: 'by a viewer' });
    expect(refused.status).to.equal(403);
    expect(refused.body.errors[0].message).to.equal(
      'CreateStructure needs the member role or above; this credential acts as viewer',
    );
    expect((await viewer.delete(`/api/structures/${made.body.structure_id}`)).status).to.equal(403);

    expect((await member.post('/api/secrets', { name: 's', value: 'v' })).status).to.equal(403);
    expect((await admin.post('/api/secrets', { name: 's', value: 'v' })).status).to.equal(201);
    expect((await admin.post('/api/billing/management-url', {})).status).to.equal(403);
    // A member reads its organization but not the audit log; an admin does, and sees the refusals of audited
    // routes recorded: who tried to make a secret.
    expect((await member.get('/api/audit-events')).status).to.equal(403);
    const log = await admin.get('/api/audit-events?operation=CreateSecret');
    expect(log.status, log.text).to.equal(200);
    expect(log.body.audit_events.map((e: any) => e.status)).to.deep.equal([201, 403]);
  });

  it('lists members with roles; roles change within the caller’s own, and the last owner stays', async () => {
    const owner = await newTenant('members');
    const org = owner.organizationId;
    const admin = await memberWithRole(org, 'admin');
    const person = await memberWithRole(org, 'member');
    const asOwner = as(owner.key);
    const asAdmin = as(admin.key);

    const listed = await as(person.key).get(`/api/organizations/${org}/members`);
    expect(listed.status, listed.text).to.equal(200);
    expect(listed.body.members.map((m: any) => [m.email, m.role])).to.deep.equal([
      [owner.email, 'owner'],
      [admin.email, 'admin'],
      [person.email, 'member'],
    ]);
    expect(listed.body.pagination.total_count).to.equal(3);

    const membersPath = (userId: string) => `/api/organizations/${org}/members/${userId}`;
    // The member acts with the new role from its next request, on the same process and key.
    expect((await as(person.key).post('/api/secrets', { name: 'x', value: 'y' })).status).to.equal(403);
    const promoted = await asAdmin.patch(membersPath(person.userId), { role: 'admin' });
    expect(promoted.status, promoted.text).to.equal(200);
    expect(promoted.body).to.include({ user_id: person.userId, role: 'admin', email: person.email });
    expect((await as(person.key).post('/api/secrets', { name: 'x', value: 'y' })).status).to.equal(201);

    // An admin gives no owner role and acts on no owner.
    const toOwner = await asAdmin.patch(membersPath(person.userId), { role: 'owner' });
    expect(toOwner.status).to.equal(403);
    expect(toOwner.body.errors[0].message).to.match(/Giving the owner role needs the owner role/);
    expect((await asAdmin.patch(membersPath(owner.userId), { role: 'viewer' })).status).to.equal(403);
    expect((await asAdmin.delete(`/api/organizations/${org}/users/${owner.userId}`)).status).to.equal(403);

    // The last owner keeps the role and stays; once there is another, either may go.
    const lastDemoted = await asOwner.patch(membersPath(owner.userId), { role: 'admin' });
    expect(lastDemoted.status).to.equal(409);
    expect(lastDemoted.body.errors[0].message).to.match(/last owner/);
    expect((await asOwner.delete(`/api/organizations/${org}/users/${owner.userId}`)).status).to.equal(409);
    expect((await asOwner.patch(membersPath(admin.userId), { role: 'owner' })).status).to.equal(200);
    expect((await as(admin.key).patch(membersPath(owner.userId), { role: 'viewer' })).status).to.equal(200);
    expect((await asOwner.post('/api/structures', { name: 'x' })).status).to.equal(403);

    expect((await asAdmin.patch(membersPath(randomUUID()), { role: 'viewer' })).status).to.equal(404);
    const bad = await asAdmin.patch(membersPath(person.userId), { role: 'superuser' });
    expect(bad.status).to.equal(400);
    expect(bad.body.type).to.equal('ValidationError');

    const audit = await asAdmin.get('/api/audit-events?operation=UpdateOrganizationMember&outcome=SUCCEEDED');
    expect(audit.body.audit_events.map((e: any) => e.detail.role)).to.deep.equal(['viewer', 'owner', 'admin']);
  });

  it('a role changed outside this api process reaches its cached keys (the memberships trigger notifies)', async () => {
    const owner = await newTenant('elsewhere');
    const person = await memberWithRole(owner.organizationId, 'member');
    // Authenticated once: the key is in the api's cache now.
    expect((await as(person.key).post('/api/buckets', { name: 'cached' })).status).to.equal(201);
    await getStack().ds.query(`UPDATE memberships SET role = 'viewer' WHERE organization_id = $1 AND user_id = $2`, [
      owner.organizationId,
      person.userId,
    ]);
    const deadline = Date.now() + 2_000;
    let status = 0;
    while (Date.now() < deadline && status !== 403) {
      status = (await as(person.key).post('/api/buckets', { name: 'demoted' })).status;
      if (status !== 403) await new Promise((r) => setTimeout(r, 50));
    }
    expect(status).to.equal(403);
  });

  it("a session acts with its user's role, changed at once", async () => {
    const owner = await newTenant('sessions');
    const person = await memberWithRole(owner.organizationId, 'member');
    await setPasswordOf(person.userId, PASSWORD);
    const browser = new Browser();
    const signedIn = await browser.signIn(person.email, PASSWORD, { organization_id: owner.organizationId });
    expect(signedIn.status, signedIn.text).to.equal(201);
    expect(signedIn.body.role).to.equal('member');
    expect((await browser.post('/api/buckets', { name: 'by a member' })).status).to.equal(201);

    await as(owner.key).patch(`/api/organizations/${owner.organizationId}/members/${person.userId}`, {
      role: 'viewer',
    });
    expect((await browser.get('/api/sessions/current')).body.role).to.equal('viewer');
    const refused = await browser.post('/api/buckets', { name: 'by a viewer' });
    expect(refused.status).to.equal(403);
    expect(refused.body.errors[0].message).to.match(/acts as viewer/);
    expect((await browser.delete('/api/sessions/current')).status).to.equal(204); // a viewer signs out
  });

  it('invites give the role they name, up to the inviter’s own', async () => {
    const owner = await newTenant('inviting');
    const org = owner.organizationId;
    const admin = await memberWithRole(org, 'admin');
    const invitesPath = `/api/organizations/${org}/invites`;
    const asOwnerInvite = await as(admin.key).post(invitesPath, { email: 'boss@example.test', role: 'owner' });
    expect(asOwnerInvite.status).to.equal(403);

    const invited = await as(admin.key).post(invitesPath, {
      email: `viewer-${randomUUID()}@example.test`,
      role: 'viewer',
    });
    expect(invited.status, invited.text).to.equal(201);
    expect(invited.body.role).to.equal('viewer');
    const token = new URL(invited.body.accept_url).hash.replace('#token=', '');
    const accepted = await new Browser().post(`/api/invite-links/${token}/acceptance`, { password: PASSWORD });
    expect(accepted.status, accepted.text).to.equal(200);
    const members = (await as(owner.key).get(`/api/organizations/${org}/members`)).body.members;
    expect(members.find((m: any) => m.email === invited.body.email).role).to.equal('viewer');

    const byDefault = await as(owner.key).post(invitesPath, { email: `m-${randomUUID()}@example.test` });
    expect(byDefault.body.role).to.equal('member');
  });

  it('an organization key has the role it was made with, up to its maker’s', async () => {
    const owner = await newTenant('org-keys');
    const org = owner.organizationId;
    const admin = as((await memberWithRole(org, 'admin')).key);
    const keysPath = `/api/organizations/${org}/api-keys`;
    expect((await admin.post(keysPath, { name: 'too much', role: 'owner' })).status).to.equal(403);
    const reader = await admin.post(keysPath, { name: 'reader', role: 'viewer' });
    expect(reader.status, reader.text).to.equal(201);
    expect(reader.body.role).to.equal('viewer');
    expect((await as(reader.body.value).get('/api/structures')).status).to.equal(200);
    expect((await as(reader.body.value).post('/api/structures', { name: 'x' })).status).to.equal(403);
    const plain = await admin.post(keysPath, { name: 'default' });
    expect(plain.body.role).to.equal('member');
    expect((await as(plain.body.value).post('/api/structures', { name: 'x' })).status).to.equal(201);

    // An admin manages keys up to its own role: not the owner's.
    const ownerKeys = await as(owner.key).get(`/api/users/${owner.userId}/api-keys`);
    const ownersKey = ownerKeys.body.api_keys[0].api_key_id;
    expect((await admin.delete(`/api/api-keys/${ownersKey}`)).status).to.equal(403);
    expect((await admin.delete(`/api/api-keys/${reader.body.api_key_id}`)).status).to.equal(204);
  });
});
