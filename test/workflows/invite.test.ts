// Time-skipping tests: the Java test server skips the invite's 7-day timer, so these take seconds.
import { expect } from 'chai';
import { workflowIdOf } from '../../src/temporal/workflow-start';
import { as } from '../harness/client';
import { getStack, configWith, freePort, newTenant, startApi, startTimeSkipping } from '../harness/stack';

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

  it('gives the mail up after its retries when SMTP is unreachable, records why, and the invite stays answerable', async () => {
    const config = configWith({ SMTP_URL: `smtp://127.0.0.1:${await freePort()}` }); // nothing listens there
    const mailing = await startApi(ts.env.client, 0, config);
    try {
      await ts.runWorker(async () => {
        const org = await newTenant('org');
        const person = await newTenant('person');
        const created = await as(org.key, mailing.baseUrl).post(`/api/organizations/${org.organizationId}/invites`, {
          email: person.email,
        });
        expect(created.status, created.text).to.equal(201);
        expect(created.body).not.to.have.property('accept_url');
        let row: { mail_error: string | null; status: string } | undefined;
        // The retries' backoff (about two hours in all) is skipped 10 minutes at a time.
        for (let i = 0; i < 40 && !row?.mail_error; i++) {
          [row] = await getStack().ds.query(`SELECT mail_error, status FROM invites WHERE invite_id = $1`, [
            created.body.invite_id,
          ]);
          if (!row?.mail_error) await ts.env.sleep('10 minutes');
        }
        expect(row?.mail_error).to.match(/ECONNREFUSED|connect/i);
        expect(row?.status).to.equal('PENDING');
        const read = await as(org.key, mailing.baseUrl).get(`/api/invites/${created.body.invite_id}`);
        expect(read.body.mail_error).to.equal(row?.mail_error);
        const answered = await as(person.key, mailing.baseUrl).post(`/api/invites/${created.body.invite_id}/response`, {
          response: 'ACCEPTED',
        });
        expect(answered.status, answered.text).to.equal(204);
        const handle = ts.env.client.workflow.getHandle(workflowIdOf('invite', created.body.invite_id));
        expect(await handle.result()).to.equal('ACCEPTED');
      }, config);
    } finally {
      await mailing.close();
    }
  });
});
