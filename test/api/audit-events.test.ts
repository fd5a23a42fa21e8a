// The audit log (docs/people.md#audit-log) through the API: sign-ins refused and accepted, a secret made and
// deleted by a key, a sign-out, each with who, from where and the status; the filters; another organization
// sees none of it; the reconciler's sweep of events past the retention.
import { expect } from 'chai';
import { sweepOldAuditEvents } from '../../src/services/accounts/audit';
import { as } from '../harness/client';
import { Browser, PASSWORD, personWithPassword } from '../harness/people';
import { getStack, newTenant } from '../harness/stack';

type Event = Record<string, any>;

describe('audit log', function () {
  this.timeout(60_000);

  it('records sign-ins (refused too), changes and deletions, with who, from where and the status', async () => {
    const person = await personWithPassword('audited');
    const api = as(person.key);
    const refused = await new Browser().signIn(person.email, 'not the password at all');
    expect(refused.status).to.equal(401);
    const browser = new Browser();
    const signedIn = await browser.signIn(person.email, PASSWORD);
    expect(signedIn.status).to.equal(201);
    const secret = await api.post('/api/secrets', { name: 'audited-secret', value: 'the secret value itself' });
    expect(secret.status, secret.text).to.equal(201);
    expect((await api.delete(`/api/secrets/${secret.body.secret_id}`)).status).to.equal(204);
    expect((await api.delete(`/api/secrets/${secret.body.secret_id}`)).status).to.equal(404); // refused: recorded too
    expect((await browser.delete('/api/sessions/current')).status).to.equal(204);
    await api.get('/api/secrets'); // a read: not audited

    const listed = await api.get('/api/audit-events');
    expect(listed.status, listed.text).to.equal(200);
    expect(listed.text).not.to.include('the secret value itself');
    expect(listed.text).not.to.include(PASSWORD);
    const events: Event[] = listed.body.audit_events;
    expect(events.map((e) => [e.operation, e.status])).to.deep.equal([
      ['DeleteCurrentSession', 204],
      ['DeleteSecret', 404],
      ['DeleteSecret', 204],
      ['CreateSecret', 201],
      ['CreateSession', 201],
      ['CreateSession', 401],
      ['SetPasswordWithReset', 204], // personWithPassword set it through a reset link
    ]);
    const [signOut, , deleted, created, signIn, refusal] = events;
    expect(refusal).to.include({ user_id: person.userId, api_key_id: null, session_id: null, method: 'POST' });
    expect(refusal.detail).to.deep.equal({ email: person.email });
    expect(refusal.address).to.be.a('string');
    expect(signIn).to.include({ user_id: person.userId, session_id: null });
    expect(created).to.include({ user_id: person.userId, path: '/api/secrets' });
    expect(created.api_key_id).to.be.a('string');
    expect(created.detail).to.deep.equal({ name: 'audited-secret' });
    expect(deleted.path).to.equal(`/api/secrets/${secret.body.secret_id}`);
    expect(signOut).to.include({ user_id: person.userId, session_id: signedIn.body.session_id, api_key_id: null });
    expect(listed.body.pagination.total_count).to.equal(7);

    const failedSignIns = await api.get('/api/audit-events?operation=CreateSession&outcome=FAILED');
    expect(failedSignIns.body.audit_events.map((e: Event) => e.status)).to.deep.equal([401]);
    const succeeded = await api.get('/api/audit-events?outcome=SUCCEEDED&page_size=2');
    expect(succeeded.body.audit_events.map((e: Event) => e.operation)).to.deep.equal([
      'DeleteCurrentSession',
      'DeleteSecret',
    ]);
    const after = await api.get(`/api/audit-events?created_after=${encodeURIComponent(created.created_at)}`);
    expect(after.body.audit_events.map((e: Event) => e.operation)).to.deep.equal([
      'DeleteCurrentSession',
      'DeleteSecret',
      'DeleteSecret',
    ]);
    expect((await api.get('/api/audit-events?outcome=MAYBE')).status).to.equal(400);

    const stranger = await newTenant('stranger');
    expect((await as(stranger.key).get('/api/audit-events')).body.audit_events).to.deep.equal([]);
  });

  it('keeps events only AUDIT_RETENTION_DAYS', async () => {
    const t = await newTenant('audit-retention');
    await as(t.key).post('/api/secrets', { name: 'old', value: 'v' });
    await getStack().ds.query(
      `UPDATE audit_events SET created_at = now() - interval '401 days' WHERE organization_id = $1`,
      [t.organizationId],
    );
    await as(t.key).post('/api/secrets', { name: 'new', value: 'v' });
    expect(await sweepOldAuditEvents(getStack().ds, 400)).to.be.at.least(1);
    const left = await as(t.key).get('/api/audit-events');
    expect(left.body.audit_events.map((e: Event) => e.detail.name)).to.deep.equal(['new']);
  });
});
