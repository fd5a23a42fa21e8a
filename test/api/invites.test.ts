import { Client, Connection } from '@temporalio/client';
import { expect } from 'chai';
import { workflowIdOf } from '../../src/temporal/workflow-start';
import { RESOURCE_ID, RESOURCE_KIND, ORGANIZATION_ID } from '../../src/temporal/search-attributes';
import { as } from '../harness/client';
import { Browser } from '../harness/people';
import { getStack, newTenant, startApi } from '../harness/stack';

/** An organization that invites, and a person (with a key of their own) who is invited. */
async function inviterAndInvitee() {
  const org = await newTenant('org');
  const person = await newTenant('person');
  const created = await as(org.key).post(`/api/organizations/${org.organizationId}/invites`, {
    email: person.email.toUpperCase(),
  });
  expect(created.status).to.equal(201);
  return { org, person, invite: created.body };
}

const workflowOf = (inviteId: string) => getStack().env.client.workflow.getHandle(workflowIdOf('invite', inviteId));

describe('invites', () => {
  it('creates a pending invite whose workflow is findable by resource id, organization and kind', async () => {
    const { org, person, invite } = await inviterAndInvitee();
    expect(invite).to.include({ organization_id: org.organizationId, email: person.email, status: 'PENDING' });
    const organization = await as(org.key).get(`/api/organizations/${org.organizationId}`);
    expect(invite.organization_name).to.equal(organization.body.name);
    const days = (Date.parse(invite.expires_at) - Date.parse(invite.created_at)) / 86_400_000;
    expect(days).to.be.closeTo(7, 0.001);

    const description = await workflowOf(invite.invite_id).describe();
    expect(description.status.name).to.equal('RUNNING');
    expect(description.type).to.equal('inviteWorkflow');
    expect(description.typedSearchAttributes.get(RESOURCE_ID)).to.equal(invite.invite_id);
    expect(description.typedSearchAttributes.get(ORGANIZATION_ID)).to.equal(org.organizationId);
    expect(description.typedSearchAttributes.get(RESOURCE_KIND)).to.equal('invite');
    expect(await description.memo).to.include({ resource_id: invite.invite_id });
    expect(await description.staticSummary()).to.equal(`Invite ${person.email}`);

    // What an operator types into the Temporal UI's search box (visibility is eventually consistent).
    const query = `TarmacResourceId="${invite.invite_id}"`;
    let found: string[] = [];
    for (let i = 0; i < 50 && !found.length; i++) {
      for await (const wf of getStack().env.client.workflow.list({ query })) found.push(wf.workflowId);
      if (!found.length) await new Promise((r) => setTimeout(r, 100));
    }
    expect(found).to.deep.equal([`invite-${invite.invite_id}`]);
  });

  it('lets the invited user accept: they join the organization and the workflow completes', async () => {
    const { org, person, invite } = await inviterAndInvitee();
    const mine = await as(person.key).get('/api/invites');
    expect(mine.body.invites.map((i: { invite_id: string }) => i.invite_id)).to.deep.equal([invite.invite_id]);
    // The invitee sees the name of the organization it is invited to.
    expect(mine.body.invites[0].organization_name).to.equal(invite.organization_name);
    expect((await as(person.key).get(`/api/invites/${invite.invite_id}`)).status).to.equal(200);

    const answered = await as(person.key).post(`/api/invites/${invite.invite_id}/response`, { response: 'ACCEPTED' });
    expect(answered.status).to.equal(204);
    expect(answered.text).to.equal('');

    const after = await as(org.key).get(`/api/invites/${invite.invite_id}`);
    expect(after.body.status).to.equal('ACCEPTED');
    expect(after.body.responded_at).to.be.a('string');
    const members = await as(org.key).get(`/api/organizations/${org.organizationId}/users`);
    expect(members.body.users.map((u: { email: string }) => u.email).sort()).to.deep.equal(
      [org.email, person.email].sort(),
    );
    const personOrgs = await as(person.key).get('/api/organizations');
    expect(personOrgs.body.organizations.map((o: { organization_id: string }) => o.organization_id)).to.include(
      org.organizationId,
    );
    expect(await workflowOf(invite.invite_id).result()).to.equal('ACCEPTED');

    const again = await as(person.key).post(`/api/invites/${invite.invite_id}/response`, { response: 'REJECTED' });
    expect(again.status).to.equal(409);
    expect(again.body.type).to.equal('ConflictError');
    expect(again.body.errors[0].message).to.match(/already answered: ACCEPTED/);
  });

  it('lets a person with no account follow the link, set a password, join and sign in; the link then answers 409', async () => {
    const org = await newTenant('org');
    const email = `new-${Date.now()}-${Math.random().toString(36).slice(2)}@example.test`;
    const created = await as(org.key).post(`/api/organizations/${org.organizationId}/invites`, { email });
    expect(created.status, created.text).to.equal(201);
    const url = new URL(created.body.accept_url as string);
    expect(url.pathname).to.equal('/console/accept-invite');
    const token = new URLSearchParams(url.hash.slice(1)).get('token') as string;
    expect(token).to.match(/^[A-Za-z0-9_-]{43}$/);
    // The link appears once: never in a list or a read.
    const listed = await as(org.key).get(`/api/organizations/${org.organizationId}/invites`);
    expect(listed.text).not.to.include(token);
    expect(listed.body.invites[0]).not.to.have.property('accept_url');

    const anonymous = as(undefined);
    const link = await anonymous.get(`/api/invite-links/${token}`);
    expect(link.status, link.text).to.equal(200);
    expect(link.body.account).to.equal('NEW');
    expect(link.body.invite).to.include({ invite_id: created.body.invite_id, email, status: 'PENDING' });
    expect(link.body.invite.organization_name).to.equal(created.body.organization_name);
    const unknown = await anonymous.get(`/api/invite-links/${'x'.repeat(43)}`);
    expect(unknown.status).to.equal(404);
    expect(unknown.body.errors[0].message).to.match(/unknown/);

    const noPassword = await anonymous.post(`/api/invite-links/${token}/acceptance`, {});
    expect(noPassword.status, noPassword.text).to.equal(400);
    expect(noPassword.body.errors[0].path).to.equal('/body/password');
    expect((await anonymous.post(`/api/invite-links/${token}/acceptance`, { password: 'short' })).status).to.equal(400);
    const accepted = await anonymous.post(`/api/invite-links/${token}/acceptance`, { password: 'a long new password' });
    expect(accepted.status, accepted.text).to.equal(200);
    expect(accepted.body).to.include({ status: 'ACCEPTED', invite_id: created.body.invite_id });
    expect(await workflowOf(created.body.invite_id).result()).to.equal('ACCEPTED');

    const browser = new Browser();
    const signedIn = await browser.signIn(email, 'a long new password');
    expect(signedIn.status, signedIn.text).to.equal(201);
    expect(signedIn.body.organization_id).to.equal(org.organizationId);
    const members = await as(org.key).get(`/api/organizations/${org.organizationId}/users`);
    expect(members.body.users.map((u: { email: string }) => u.email)).to.include(email);

    const again = await anonymous.post(`/api/invite-links/${token}/acceptance`, {});
    expect(again.status, again.text).to.equal(409);
    expect(again.body.errors[0].message).to.match(/already answered: ACCEPTED/);
    const resetPassword = await anonymous.post(`/api/invite-links/${token}/acceptance`, {
      password: 'another password!',
    });
    expect(resetPassword.status).to.equal(409); // a link never changes a password that is set
    expect((await new Browser().signIn(email, 'a long new password')).status).to.equal(201);

    // Invited elsewhere, the same person has a password: the link accepts without one.
    const other = await newTenant('other');
    const second = await as(other.key).post(`/api/organizations/${other.organizationId}/invites`, { email });
    const secondToken = new URLSearchParams(new URL(second.body.accept_url).hash.slice(1)).get('token') as string;
    expect((await anonymous.get(`/api/invite-links/${secondToken}`)).body.account).to.equal('HAS_PASSWORD');
    const withPassword = await anonymous.post(`/api/invite-links/${secondToken}/acceptance`, {
      password: 'x'.repeat(20),
    });
    expect(withPassword.status).to.equal(409);
    expect(withPassword.body.errors[0].message).to.match(/already has a password: sign in/);
    expect((await anonymous.post(`/api/invite-links/${secondToken}/acceptance`, {})).status).to.equal(200);
    const organizations = (await new Browser().signIn(email, 'a long new password')).body.user.organizations;
    expect(organizations).to.have.members([org.organizationId, other.organizationId]);
  });

  it('answers an expired or deleted invite link as its state says', async () => {
    const org = await newTenant('org');
    const anonymous = as(undefined);
    const tokenOf = (answer: { body: { accept_url: string } }) =>
      new URLSearchParams(new URL(answer.body.accept_url).hash.slice(1)).get('token') as string;
    const deleted = await as(org.key).post(`/api/organizations/${org.organizationId}/invites`, {
      email: `gone-${Date.now()}@example.test`,
    });
    await as(org.key).delete(`/api/invites/${deleted.body.invite_id}`);
    expect((await anonymous.get(`/api/invite-links/${tokenOf(deleted)}`)).status).to.equal(404);

    const expiring = await as(org.key).post(`/api/organizations/${org.organizationId}/invites`, {
      email: `late-${Date.now()}@example.test`,
    });
    await getStack().ds.query(`UPDATE invites SET expires_at = now() - interval '1 second' WHERE invite_id = $1`, [
      expiring.body.invite_id,
    ]);
    const late = await anonymous.post(`/api/invite-links/${tokenOf(expiring)}/acceptance`, {
      password: 'x'.repeat(20),
    });
    expect(late.status, late.text).to.equal(409);
    expect(late.body.errors[0].message).to.match(/expired/);
    expect((await getStack().ds.query(`SELECT 1 FROM users WHERE email = $1`, [expiring.body.email])).length).to.equal(
      0,
    );
  });

  it('lets the invited user reject: nothing is joined', async () => {
    const { org, person, invite } = await inviterAndInvitee();
    expect(
      (await as(person.key).post(`/api/invites/${invite.invite_id}/response`, { response: 'REJECTED' })).status,
    ).to.equal(204);
    expect((await as(org.key).get(`/api/invites/${invite.invite_id}`)).body.status).to.equal('REJECTED');
    const members = await as(org.key).get(`/api/organizations/${org.organizationId}/users`);
    expect(members.body.users).to.have.length(1);
    expect(await workflowOf(invite.invite_id).result()).to.equal('REJECTED');
  });

  it('only the invited user may respond; others get 403 (same organization) or 404', async () => {
    const { org, invite } = await inviterAndInvitee();
    const stranger = await newTenant('stranger');
    const fromOrg = await as(org.key).post(`/api/invites/${invite.invite_id}/response`, { response: 'ACCEPTED' });
    expect(fromOrg.status).to.equal(403);
    expect(fromOrg.body.type).to.equal('ForbiddenError');
    expect(
      (await as(stranger.key).post(`/api/invites/${invite.invite_id}/response`, { response: 'ACCEPTED' })).status,
    ).to.equal(404);
    expect((await as(stranger.key).get(`/api/invites/${invite.invite_id}`)).status).to.equal(404);
    const bad = await as(org.key).post(`/api/invites/${invite.invite_id}/response`, { response: 'MAYBE' });
    expect(bad.status).to.equal(400);
  });

  it('refuses a second pending invite for the same email and inviting a member', async () => {
    const { org, person } = await inviterAndInvitee();
    const dup = await as(org.key).post(`/api/organizations/${org.organizationId}/invites`, { email: person.email });
    expect(dup.status).to.equal(409);
    const self = await as(org.key).post(`/api/organizations/${org.organizationId}/invites`, { email: org.email });
    expect(self.status).to.equal(409);
    expect(
      (await as(org.key).post(`/api/organizations/${org.organizationId}/invites`, { email: 'not an email' })).status,
    ).to.equal(400);
    expect(
      (await as(org.key).post(`/api/organizations/${org.organizationId}/invites`, { email: `${'a'.repeat(250)}@x.io` }))
        .status,
    ).to.equal(400);
  });

  it('deletes a pending invite and stops its workflow', async () => {
    const { org, person, invite } = await inviterAndInvitee();
    const listed = await as(org.key).get(`/api/organizations/${org.organizationId}/invites`);
    expect(listed.body.invites.map((i: { invite_id: string }) => i.invite_id)).to.deep.equal([invite.invite_id]);
    expect((await as(person.key).delete(`/api/invites/${invite.invite_id}`)).status).to.equal(404);
    expect((await as(org.key).delete(`/api/invites/${invite.invite_id}`)).status).to.equal(204);
    expect((await as(org.key).get(`/api/invites/${invite.invite_id}`)).status).to.equal(404);
    expect(await workflowOf(invite.invite_id).result()).to.equal('WITHDRAWN');
    expect(
      (await as(person.key).post(`/api/invites/${invite.invite_id}/response`, { response: 'ACCEPTED' })).status,
    ).to.equal(404);
  });

  it('does not leave a row behind when the workflow cannot be started', async () => {
    const org = await newTenant('org');
    // A client of a Temporal server that is not there: the start fails, the insert must roll back.
    const deadConnection = await Connection.connect({ address: '127.0.0.1:1', connectTimeout: 200 }).catch(
      () => undefined,
    );
    const lazy = deadConnection ?? Connection.lazy({ address: '127.0.0.1:1', connectTimeout: 200 });
    const api = await startApi(new Client({ connection: lazy }));
    try {
      const res = await as(org.key, api.baseUrl).post(`/api/organizations/${org.organizationId}/invites`, {
        email: 'zombie@example.test',
      });
      expect(res.status).to.equal(503);
      expect(res.body.type).to.equal('ServiceUnavailableError');
      const listed = await as(org.key).get(`/api/organizations/${org.organizationId}/invites`);
      expect(listed.body.invites).to.have.length(0);
    } finally {
      await api.close();
    }
  });
});
