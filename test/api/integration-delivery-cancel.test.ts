// Cancelling a delivery's work through the public api, on the real stack (the chat app double, the model
// provider double): a chat message whose assistant waits on a silent model is cancelled mid-work (CANCELLED,
// who asked; the assistant run it started goes on); a second cancel answers the same record; work that ended
// otherwise, or a delivery with no work, is 409; unknown, foreign and malformed ids are 404 and 400. Deleting an
// integration stops its deliveries' open work first: the workflow records CANCELLED, no open row is left.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { signedDelivery } from '../harness/chatapp-double';
import { as, request } from '../harness/client';
import { getStack, newTenant } from '../harness/stack';
import { quietCodehostApp } from '../support/deliveries';

type Api = ReturnType<typeof as>;
const SIGNING_SECRET = 'cancel-signing-secret';

async function secret(api: Api, value: string): Promise<string> {
  const res = await api.post('/api/secrets', { name: `s-${randomUUID()}`, value });
  expect(res.status, res.text).to.equal(201);
  return res.body.secret_id;
}

/** A chatapp integration of one assistant: its id and a sender of signed deliveries. */
async function chatIntegration(api: Api) {
  const bot = getStack().chatApp.addBot();
  const assistant = await api.post('/api/assistants', { name: 'slow helper' });
  const created = await api.post('/api/integrations', {
    name: `chat-${randomUUID().slice(0, 8)}`,
    type: 'chatapp',
    config: {
      chatapp: {
        app_name: 'helper',
        app_display_name: 'Helper',
        app_description: 'Helps',
        bot_token_secret_ref: await secret(api, bot.token),
        signing_secret_secret_ref: await secret(api, SIGNING_SECRET),
      },
    },
    assistant_ids: [assistant.body.assistant_id],
  });
  expect(created.status, created.text).to.equal(201);
  const integrationId: string = created.body.integration_id;
  const deliver = (body: unknown) => {
    const raw = JSON.stringify(body);
    return request('POST', `/api/integrations/${integrationId}/handler`, undefined, {
      raw,
      headers: { 'content-type': 'application/json', ...signedDelivery(SIGNING_SECRET, raw) },
    });
  };
  /** A message the model never answers (until its client leaves): the delivery's work waits on its assistant. */
  const stalledMessage = async () => {
    const token = `stalled-${randomUUID()}`;
    getStack().modelProvider.script({ model: 'test-model', asked: token, stallBeforeAnswer: true });
    const acked = await deliver({
      type: 'event_callback',
      team_id: 'T1',
      api_app_id: 'A1',
      event_id: `Ev${randomUUID().replace(/-/g, '').slice(0, 10)}`,
      event_time: Math.floor(Date.now() / 1000),
      event: { type: 'message', channel: 'C9', user: 'U1', text: token, ts: `${Date.now() / 1000}` },
    });
    expect(acked.status, acked.text).to.equal(200);
    expect(acked.body.verdict).to.equal('accepted');
    const asked = await until('the model to be asked', () =>
      getStack().modelProvider.requests.find((r) => JSON.stringify(r.body.messages).includes(token)),
    );
    return { deliveryId: acked.body.delivery_id as string, modelRequest: asked };
  };
  return { integrationId, deliver, stalledMessage };
}

async function until<T>(what: string, check: () => T | undefined | Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 60_000; // a bound, not a measurement
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function deliveryOf(api: Api, integrationId: string, deliveryId: string) {
  const res = await api.get(`/api/integrations/${integrationId}/deliveries?page_size=100`);
  expect(res.status, res.text).to.equal(200);
  return (res.body.deliveries as any[]).find((d) => d.delivery_id === deliveryId);
}

describe('integration delivery cancel', function () {
  this.timeout(180_000);
  let t: Awaited<ReturnType<typeof newTenant>>;
  let api: Api;

  before(async () => {
    t = await newTenant('delivery-cancel');
    api = as(t.key);
  });

  it("cancels a delivery's work mid-way: CANCELLED with who asked; idempotent; its assistant run goes on", async () => {
    const chat = await chatIntegration(api);
    const { deliveryId, modelRequest } = await chat.stalledMessage();
    const running = await deliveryOf(api, chat.integrationId, deliveryId);
    expect(running.status).to.equal('RUNNING');
    expect(running.assistant_run_ids).to.have.length(1);
    const cancelPath = `/api/integrations/${chat.integrationId}/deliveries/${deliveryId}/cancel`;

    const cancelled = await api.post(cancelPath);
    expect(cancelled.status, cancelled.text).to.equal(200);
    expect(cancelled.body).to.deep.include({ delivery_id: deliveryId, status: 'CANCELLED' });
    expect(cancelled.body.status_detail).to.deep.include({ requested_by: t.userId });
    expect(cancelled.body.completed_at).to.be.a('string');
    const handle = getStack().env.client.workflow.getHandle(`integration-delivery-${deliveryId}`);
    expect(await handle.result()).to.equal('CANCELLED');

    const again = await api.post(cancelPath);
    expect(again.status, again.text).to.equal(200);
    expect(again.body).to.deep.equal(cancelled.body);

    // The assistant run the delivery started still waits on the model: a run of its own, cancelled on its own.
    const runId = running.assistant_run_ids[0];
    expect((await api.get(`/api/assistant-runs/${runId}`)).body.status).to.equal('RUNNING');
    expect((await api.post(`/api/assistant-runs/${runId}/cancel`)).body.status).to.equal('CANCELLED');
    expect(await modelRequest.ended).to.equal('disconnected');
  });

  it('answers 409 for work that ended otherwise or a delivery without work; 404 unknown or foreign; 400 malformed', async () => {
    const quiet = await quietCodehostApp(t.key);
    const sent = await quiet.send();
    expect(sent.status, sent.text).to.equal(200);
    expect((await quiet.ended(sent.body.delivery_id)).status).to.equal('SUCCEEDED');
    const base = `/api/integrations/${quiet.integrationId}/deliveries`;
    const late = await api.post(`${base}/${sent.body.delivery_id}/cancel`);
    expect(late.status, late.text).to.equal(409);
    expect(late.body.errors[0].message).to.match(/already ended: SUCCEEDED/);

    const chat = await chatIntegration(api);
    const challenge = await chat.deliver({ type: 'url_verification', token: 'legacy', challenge: 'abc' });
    expect(challenge.body.verdict).to.equal('challenge');
    const noWork = await api.post(
      `/api/integrations/${chat.integrationId}/deliveries/${challenge.body.delivery_id}/cancel`,
    );
    expect(noWork.status, noWork.text).to.equal(409);
    expect(noWork.body.errors[0].message).to.match(/no work to cancel \(verdict challenge\)/);

    // Another integration's delivery, an unknown one, another organization's: not found. A bad id: 400.
    const crossed = await api.post(
      `/api/integrations/${chat.integrationId}/deliveries/${sent.body.delivery_id}/cancel`,
    );
    expect(crossed.status).to.equal(404);
    expect((await api.post(`${base}/${randomUUID()}/cancel`)).status).to.equal(404);
    const other = await newTenant('delivery-cancel-other');
    expect((await as(other.key).post(`${base}/${sent.body.delivery_id}/cancel`)).status).to.equal(404);
    expect((await api.post(`${base}/not-a-uuid/cancel`)).status).to.equal(400);
  });

  it("deleting an integration stops its deliveries' open work first: CANCELLED, no open delivery row left", async () => {
    const chat = await chatIntegration(api);
    const { deliveryId, modelRequest } = await chat.stalledMessage();
    const running = await deliveryOf(api, chat.integrationId, deliveryId);
    expect(running.status).to.equal('RUNNING');

    expect((await api.delete(`/api/integrations/${chat.integrationId}`)).status).to.equal(204);
    const handle = getStack().env.client.workflow.getHandle(`integration-delivery-${deliveryId}`);
    expect(await handle.result(), 'its workflow recorded the cancel before the row went').to.equal('CANCELLED');
    const open = await getStack().ds.query(
      `SELECT count(*)::int AS n FROM integration_deliveries WHERE integration_id = $1 AND status IN ('QUEUED', 'RUNNING')`,
      [chat.integrationId],
    );
    expect(open[0].n).to.equal(0);

    await api.post(`/api/assistant-runs/${running.assistant_run_ids[0]}/cancel`);
    expect(await modelRequest.ended).to.equal('disconnected');
  });
});
