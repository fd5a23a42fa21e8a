// The integration delivery workflow on its own (started here, on the time-skipping server, as the handler
// would start it): a push on a followed branch produces a deployment of that commit, a chat message produces
// a posted answer (the model double scripted), the time limit is a workflow timer (the assistant never
// answers), and a Temporal workflow cancellation (the UI's cancel) ends the delivery CANCELLED.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { Integration, IntegrationDelivery } from '../../src/persistence/entities';
import type { DeliveryStatus } from '../../src/persistence/entities/integration';
import { recordDelivery, requestPayload } from '../../src/services/integrations/deliveries';
import { startOptionsFor, workflowStart } from '../../src/temporal/contracts';
import { config as configFile, gitRepository, waitForDeployment } from '../fixtures/projects';
import { as } from '../harness/client';
import { getStack, newTenant, startTimeSkipping } from '../harness/stack';
import { skipWhileActivityRuns } from '../support/time-skipping';

type Api = ReturnType<typeof as>;

async function secret(api: Api, value: string): Promise<string> {
  return (await api.post('/api/secrets', { name: `s-${randomUUID()}`, value })).body.secret_id;
}

/** An accepted delivery row (what the handler writes) for `body`, ready for its workflow. */
async function accepted(integrationId: string, event: string, body: string, contentType = 'application/json') {
  const { ds } = getStack();
  const integration = await ds.getRepository(Integration).findOneByOrFail({ integration_id: integrationId });
  const payload = requestPayload(body, {}, { 'content-type': contentType, 'x-github-event': event });
  return recordDelivery(ds, integration, { verdict: 'accepted', httpStatus: 200, event, status: 'QUEUED', payload });
}

async function startDelivery(
  client: import('@temporalio/client').Client,
  d: IntegrationDelivery,
  timeLimitSeconds = 600,
) {
  const { config } = getStack();
  const start = workflowStart.integrationDelivery({
    deliveryId: d.delivery_id,
    timeLimitSeconds,
    // Heartbeat timeouts count skipped server time: it must outlast any skip (see test/workflows/code-run.test.ts).
    heartbeatTimeoutSeconds: 7200,
  });
  return client.workflow.start(start.type, {
    ...startOptionsFor(
      { kind: 'integration-delivery', id: d.delivery_id, organizationId: d.organization_id, summary: 'test delivery' },
      config.temporal.taskQueue,
    ),
    args: start.args,
  });
}

const row = (deliveryId: string) =>
  getStack().ds.getRepository(IntegrationDelivery).findOneByOrFail({ delivery_id: deliveryId });

/** A chatapp integration with one assistant, its bot registered with the chat app double. */
async function chatIntegration(api: Api) {
  const bot = getStack().chatApp.addBot();
  const assistant = await api.post('/api/assistants', { name: 'answers' });
  const created = await api.post('/api/integrations', {
    name: 'chat',
    type: 'chatapp',
    config: {
      chatapp: {
        app_name: 'answers',
        app_display_name: 'Answers',
        app_description: 'Answers questions',
        bot_token_secret_ref: await secret(api, bot.token),
        signing_secret_secret_ref: await secret(api, 'signing'),
      },
    },
    assistant_ids: [assistant.body.assistant_id],
  });
  expect(created.status, created.text).to.equal(201);
  return { bot, integrationId: created.body.integration_id as string };
}

const chatEvent = (text: string, channel: string) =>
  JSON.stringify({
    type: 'event_callback',
    event_id: `Ev${randomUUID().slice(0, 8)}`,
    event: { type: 'message', channel, user: 'U1', text, ts: '1700000000.000100' },
  });

describe('integration delivery workflow', function () {
  this.timeout(400_000);

  it('deploys the pushed commit of a followed branch, with an installation token of the app', async () => {
    const t = await newTenant('delivery-push');
    const api = as(t.key);
    const { codehostApp } = getStack();
    const app = codehostApp.addApp();
    const owner = `p-${t.organizationId.slice(0, 8)}`;
    const files = (n: number) => ({
      'structure_config.yaml': configFile('python3', '  main_file: main.py\n'),
      'main.py': `print(${n})\n`,
    });
    const [first, second] = gitRepository(owner, 'repo', [files(1), files(2)]);
    const followed = await api.post('/api/structures', {
      name: 'followed',
      code: { codehost: { owner, name: 'repo', push: { branch: 'main' } } },
    });
    const other = await api.post('/api/structures', {
      name: 'other branch',
      code: { codehost: { owner, name: 'repo', push: { branch: 'release' } } },
    });
    await waitForDeployment(t.key, followed.body.latest_deployment_id);
    const integration = await api.post('/api/integrations', {
      name: 'app',
      type: 'codehost_app',
      config: {
        codehost_app: {
          app_id: app.appId,
          private_key_secret_ref: await secret(api, app.privateKeyPem),
          webhook_secret_ref: await secret(api, 'hook'),
        },
      },
      structure_ids: [followed.body.structure_id, other.body.structure_id],
    });
    const push = JSON.stringify({
      ref: 'refs/heads/main',
      after: first,
      repository: { name: 'repo', owner: { login: owner } },
      installation: { id: 4242 },
    });
    const d = await accepted(integration.body.integration_id, 'push', push);
    const ts = await startTimeSkipping();
    try {
      await ts.runWorker(async () => {
        const handle = await startDelivery(ts.env.client, d);
        expect(await handle.result()).to.equal('SUCCEEDED' satisfies DeliveryStatus);
      });
    } finally {
      await ts.stop();
    }
    const done = await row(d.delivery_id);
    expect(done.deployment_ids).to.have.length(1);
    expect(done.payload, 'the request is not kept after the work').to.equal(null);
    const deployment = await waitForDeployment(t.key, done.deployment_ids[0]);
    expect(deployment).to.deep.include({ structure_id: followed.body.structure_id, status: 'SUCCEEDED' });
    expect(deployment.code_source.codehost.commit_sha).to.equal(first);
    expect(deployment.code_source.codehost.commit_sha).to.not.equal(second);
    expect(codehostApp.issued.some((i) => i.appId === app.appId && i.installationId === 4242)).to.equal(true);
    // The structure following another branch was not deployed again.
    const others = await api.get(`/api/structures/${other.body.structure_id}/deployments`);
    expect(others.body.deployments).to.have.length(1);
  });

  it('posts the assistant answer to a chat message in its thread', async () => {
    const t = await newTenant('delivery-chat');
    const api = as(t.key);
    const { chatApp, modelProvider } = getStack();
    const { bot, integrationId } = await chatIntegration(api);
    const reply = { model: 'test-model', asked: 'the answer?', text: 'Forty-two.' };
    modelProvider.script(reply);
    const channel = `C${randomUUID().slice(0, 6)}`;
    const d = await accepted(integrationId, 'message', chatEvent(`<@${bot.userId}> the answer?`, channel));
    const ts = await startTimeSkipping();
    try {
      await ts.runWorker(async () => {
        const handle = await startDelivery(ts.env.client, d);
        expect(await handle.result()).to.equal('SUCCEEDED');
      });
    } finally {
      modelProvider.withdraw(reply);
      await ts.stop();
    }
    const post = await chatApp.waitForPost((p) => p.channel === channel);
    expect(post).to.deep.include({ token: bot.token, text: 'Forty-two.', thread_ts: '1700000000.000100' });
    const done = await row(d.delivery_id);
    expect(done.status).to.equal('SUCCEEDED');
    expect(done.status_detail).to.deep.include({ posted: done.assistant_run_ids });
    // The model was asked the message without the mention of the bot.
    const asked = modelProvider.requestsFor('test-model').map((r) => r.body.messages.at(-1)?.content);
    expect(asked).to.include('the answer?');
  });

  it('ends a delivery past its time limit FAILED, by the workflow timer, while its assistant never answers', async () => {
    const t = await newTenant('delivery-limit');
    const api = as(t.key);
    const { modelProvider, ds } = getStack();
    const { integrationId } = await chatIntegration(api);
    const stall = { model: 'test-model', asked: 'never answered', stallBeforeAnswer: true };
    modelProvider.script(stall);
    const d = await accepted(integrationId, 'message', chatEvent('never answered', `C${randomUUID().slice(0, 6)}`));
    const ts = await startTimeSkipping();
    try {
      await ts.runWorker(async () => {
        const handle = await startDelivery(ts.env.client, d, 120);
        for (let i = 0; i < 3000 && !(await row(d.delivery_id)).assistant_run_ids.length; i++)
          await new Promise((r) => setTimeout(r, 50));
        await skipWhileActivityRuns(ts.env, 121_000);
        expect(await handle.result()).to.equal('FAILED');
      });
    } finally {
      modelProvider.withdraw(stall);
      await ts.stop();
    }
    const done = await row(d.delivery_id);
    expect(done.status_detail).to.deep.include({ reason: 'TimeLimitExceeded' });
    expect(done.completed_at).to.be.instanceOf(Date);
    // The assistant run it started is its own: cancel it here.
    const [runId] = done.assistant_run_ids;
    const cancelled = await api.post(`/api/assistant-runs/${runId}/cancel`);
    expect(cancelled.status, `the assistant run went on: ${cancelled.text}`).to.equal(200);
    expect(await ds.getRepository(IntegrationDelivery).countBy({ delivery_id: d.delivery_id })).to.equal(1);
  });

  it('ends a delivery CANCELLED when its workflow is cancelled from Temporal (the UI)', async () => {
    const t = await newTenant('delivery-cancel');
    const api = as(t.key);
    const { modelProvider } = getStack();
    const { integrationId } = await chatIntegration(api);
    const stall = { model: 'test-model', asked: 'cancel me', stallBeforeAnswer: true };
    modelProvider.script(stall);
    const d = await accepted(integrationId, 'message', chatEvent('cancel me', `C${randomUUID().slice(0, 6)}`));
    const ts = await startTimeSkipping();
    try {
      await ts.runWorker(async () => {
        const handle = await startDelivery(ts.env.client, d);
        for (let i = 0; i < 3000 && !(await row(d.delivery_id)).assistant_run_ids.length; i++)
          await new Promise((r) => setTimeout(r, 50));
        await handle.cancel();
        await handle.result().catch(() => undefined);
      });
    } finally {
      modelProvider.withdraw(stall);
      await ts.stop();
    }
    const done = await row(d.delivery_id);
    expect(done.status).to.equal('CANCELLED');
    expect(done.status_detail).to.deep.include({ requested_by: 'Temporal workflow cancellation' });
    const [runId] = done.assistant_run_ids;
    const cancelled = await api.post(`/api/assistant-runs/${runId}/cancel`);
    expect(cancelled.status, `the assistant run went on: ${cancelled.text}`).to.equal(200);
  });

  it('does nothing for a delivery whose integration was deleted', async () => {
    const t = await newTenant('delivery-gone');
    const api = as(t.key);
    const { integrationId } = await chatIntegration(api);
    const d = await accepted(integrationId, 'message', chatEvent('too late', 'C1'));
    expect((await api.delete(`/api/integrations/${integrationId}`)).status).to.equal(204);
    const ts = await startTimeSkipping();
    try {
      await ts.runWorker(async () => {
        expect(await (await startDelivery(ts.env.client, d)).result()).to.equal('MISSING');
      });
    } finally {
      await ts.stop();
    }
  });
});
