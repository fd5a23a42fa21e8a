// Invites by mail (docs/people.md#invites) through a real SMTP server (aiosmtpd, test/harness/smtp-server.ts): a
// worker and an api of their own with SMTP_URL, an invite whose workflow mails its link, a new person who follows
// it, sets a password, joins and signs in; and the mail of an invite withdrawn before it went is not sent.
import { expect } from 'chai';
import { as } from '../harness/client';
import { Browser } from '../harness/people';
import { startSmtpServer, type SmtpServer } from '../harness/smtp-server';
import { configWith, getStack, newTenant, startApi, startWorker } from '../harness/stack';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('invites by mail', function () {
  this.timeout(180_000);
  let smtp: SmtpServer;
  let baseUrl: string;
  const stops: Array<() => Promise<void>> = [];

  before(async () => {
    smtp = await startSmtpServer();
    stops.push(() => smtp.stop());
    const config = configWith({
      TEMPORAL_TASK_QUEUE: `tarmac-test-invite-mail-${process.pid}`,
      SMTP_URL: smtp.url,
      MAIL_FROM: 'Tarmac Test <invites@tarmac.test>',
    });
    const worker = await startWorker(config);
    stops.push(worker.close);
    const api = await startApi(getStack().env.client, 0, config);
    stops.push(api.close);
    baseUrl = api.baseUrl;
  });
  after(async () => {
    for (const stop of stops.reverse()) await stop().catch((err) => console.error('teardown:', err));
  });

  async function mailTo(email: string) {
    for (let i = 0; i < 200; i++) {
      const mail = smtp.messages().find((m) => m.to === email);
      if (mail) return mail;
      await sleep(100);
    }
    throw new Error(`no mail to ${email}`);
  }

  it('mails the link; the new person follows it, sets a password, joins and signs in', async () => {
    const org = await newTenant('mailing-org');
    const email = `mailed-${Date.now()}@example.test`;
    const created = await as(org.key, baseUrl).post(`/api/organizations/${org.organizationId}/invites`, { email });
    expect(created.status, created.text).to.equal(201);
    expect(created.body).not.to.have.property('accept_url'); // mailed instead

    const mail = await mailTo(email);
    expect(mail.from).to.equal('Tarmac Test <invites@tarmac.test>');
    expect(mail.subject).to.equal(`You are invited to ${created.body.organization_name} on Tarmac`);
    const link = mail.text.match(/https?:\/\/\S+\/console\/accept-invite#token=([A-Za-z0-9_-]{43})/);
    expect(link, mail.text).to.not.equal(null);
    const token = link![1];

    const anonymous = as(undefined, baseUrl);
    const read = await anonymous.get(`/api/invite-links/${token}`);
    expect(read.status, read.text).to.equal(200);
    expect(read.body).to.deep.include({ account: 'NEW' });
    expect(read.body.invite.mailed_at).to.be.a('string');
    const accepted = await anonymous.post(`/api/invite-links/${token}/acceptance`, { password: 'mailed password 1' });
    expect(accepted.status, accepted.text).to.equal(200);
    expect(accepted.body.status).to.equal('ACCEPTED');
    const signedIn = await new Browser(baseUrl).signIn(email, 'mailed password 1');
    expect(signedIn.status, signedIn.text).to.equal(201);
    expect(signedIn.body.organization_id).to.equal(org.organizationId);
  });

  it('answers a repeat of an invite for the same email with 409, and mails nothing for it', async () => {
    const org = await newTenant('mailing-twice');
    const email = `once-${Date.now()}@example.test`;
    const api = as(org.key, baseUrl);
    expect((await api.post(`/api/organizations/${org.organizationId}/invites`, { email })).status).to.equal(201);
    expect((await api.post(`/api/organizations/${org.organizationId}/invites`, { email })).status).to.equal(409);
    await mailTo(email);
    await sleep(500);
    expect(smtp.messages().filter((m) => m.to === email)).to.have.length(1);
  });
});
