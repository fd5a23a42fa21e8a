// Time-skipping tests: the Java test server skips the invite's 7-day timer, so these take seconds.
import { expect } from 'chai';
import { workflowIdOf } from '../../src/temporal/workflow-start';
import { as } from '../harness/client';
import { newTenant, startApi, startTimeSkipping } from '../harness/stack';

describe('invite workflow with time skipping', function () {
  this.timeout(120_000);
  let ts: Awaited<ReturnType<typeof startTimeSkipping>>;
  let api: Awaited<ReturnType<typeof startApi>>;

  // One environment per test: the test server's clock runs ahead after each skip, while the api stamps
  // expires_at with the wall clock, so a shared environment would see later invites expire at once.
  beforeEach(async () => {
    ts = await startTimeSkipping();
    api = await startApi(ts.env.client);
  });
  afterEach(async () => {
    await api?.close();
    await ts?.stop();
  });

  async function createInvite() {
    const org = await newTenant('org');
    const person = await newTenant('person');
    const created = await as(org.key, api.baseUrl).post(`/api/organizations/${org.organizationId}/invites`, {
      email: person.email,
    });
    expect(created.status).to.equal(201);
    const handle = ts.env.client.workflow.getHandle(workflowIdOf('invite', created.body.invite_id));
    return { org, person, invite: created.body, handle };
  }

  it('expires an unanswered invite after 7 days, without waiting 7 days', async () => {
    await ts.runWorker(async () => {
      const { org, invite, handle } = await createInvite();
      const wallClock = Date.now();
      const skippedFrom = await ts.env.currentTimeMs();
      expect(await handle.result()).to.equal('EXPIRED');
      expect(Date.now() - wallClock).to.be.lessThan(30_000);
      expect((await ts.env.currentTimeMs()) - skippedFrom).to.be.at.least(7 * 86_400_000 - 60_000);
      const after = await as(org.key, api.baseUrl).get(`/api/invites/${invite.invite_id}`);
      expect(after.body.status).to.equal('EXPIRED');
    });
  });

  it('refuses a response after expiry with 409 and a clear message; the user does not join', async () => {
    await ts.runWorker(async () => {
      const { org, person, invite, handle } = await createInvite();
      await handle.result();
      const late = await as(person.key, api.baseUrl).post(`/api/invites/${invite.invite_id}/response`, {
        response: 'ACCEPTED',
      });
      expect(late.status).to.equal(409);
      expect(late.body.type).to.equal('ConflictError');
      expect(late.body.errors[0].message).to.match(/expired/);
      const members = await as(org.key, api.baseUrl).get(`/api/organizations/${org.organizationId}/users`);
      expect(members.body.users.map((u: { email: string }) => u.email)).to.deep.equal([org.email]);
    });
  });

  it('still accepts a response on day 6', async () => {
    await ts.runWorker(async () => {
      const { org, person, invite, handle } = await createInvite();
      await ts.env.sleep('6 days');
      const answered = await as(person.key, api.baseUrl).post(`/api/invites/${invite.invite_id}/response`, {
        response: 'ACCEPTED',
      });
      expect(answered.status, answered.text).to.equal(204);
      expect(await handle.result()).to.equal('ACCEPTED');
      const members = await as(org.key, api.baseUrl).get(`/api/organizations/${org.organizationId}/users`);
      expect(members.body.users).to.have.length(2);
    });
  });
});
