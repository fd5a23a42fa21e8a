// Integrations through HTTP on the real stack: CRUD and its refusals, the webhook handler (keys, the
// three-argument convention, idempotency, the delivery log, 401/403/404/413/429), the chat app handler against
// the Slack double (signatures, replays, URL verification, bot messages ignored, a slow chat app acknowledged at
// once and answered in its thread, duplicate events) and the code host app handler against the GitHub double
// (signatures, a push on a followed branch deploying with an installation token, other events running, a
// delivery whose row commits after its workflow started).
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { structureWithBuild } from '../harness/builds';
import { signedDelivery } from '../harness/chatapp-double';
import { as, request } from '../harness/client';
import { signedCodehostDelivery } from '../harness/codehost-app-double';
import { quietCodehostApp } from '../support/deliveries';
import { waitForRun } from '../harness/runs';
import { getStack, newTenant } from '../harness/stack';
import { config as configFile, gitRepository, waitForDeployment } from '../fixtures/projects';

type Api = ReturnType<typeof as>;

const ARGS_PROGRAM = `
import json, os, sys
print(json.dumps({"args": sys.argv[1:], "bot": os.environ.get("SLACK_BOT_TOKEN")}))
`;

async function secret(api: Api, value: string): Promise<string> {
  const res = await api.post('/api/secrets', { name: `s-${randomUUID()}`, value }, {});
  expect(res.status, res.text).to.equal(201);
  return res.body.secret_id;
}

async function deliveries(api: Api, integrationId: string) {
  const res = await api.get(`/api/integrations/${integrationId}/deliveries?page_size=100`);
  expect(res.status, res.text).to.equal(200);
  return res.body.deliveries as any[];
}

async function deliveryEnd(api: Api, integrationId: string, deliveryId: string) {
  // A bound, not a measurement: generous for a loaded machine.
  const deadline = Date.now() + 150_000;
  for (;;) {
    const d = (await deliveries(api, integrationId)).find((x) => x.delivery_id === deliveryId);
    if (d && ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(d.status)) return d;
    if (Date.now() > deadline) {
      const wf = await getStack()
        .env.client.workflow.getHandle(`integration-delivery-${deliveryId}`)
        .describe()
        .then((w) => `${w.status.name}, pending activities: ${JSON.stringify(w.raw.pendingActivities)}`)
        .catch((err: Error) => err.message);
      throw new Error(`delivery ${deliveryId} still ${d?.status}; its workflow: ${wf}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The stack's default model (assistant runs of integrations name none) answers "echo: <the user's message>". */
function echoingModel() {
  const provider = getStack().modelProvider;
  const reply = {
    model: 'test-model',
    respond: (body: any) => ({ text: `echo: ${body.messages[body.messages.length - 1].content}` }),
    times: 1000,
  };
  provider.script(reply);
  return () => provider.withdraw(reply);
}

const handler = (id: string) => `/api/integrations/${id}/handler`;

describe('integrations', () => {
  let t: Awaited<ReturnType<typeof newTenant>>;
  let api: Api;

  before(async () => {
    t = await newTenant('integrations');
    api = as(t.key);
  });

  it('creates, reads, lists, updates and deletes; refuses foreign ids, mismatched configs and type changes', async () => {
    const built = await structureWithBuild(t.organizationId, { files: { 'structure.py': ARGS_PROGRAM } });
    const assistant = await api.post('/api/assistants', { name: 'helper' });
    const created = await api.post('/api/integrations', {
      name: 'hook',
      type: 'webhook',
      config: { webhook: {} },
      structure_ids: [built.structureId],
      assistant_ids: [assistant.body.assistant_id],
    });
    expect(created.status, created.text).to.equal(201);
    const id = created.body.integration_id;
    const endpoint = `${getStack().config.publicBaseUrl}/api/integrations/${id}/handler`;
    expect(created.body).to.deep.include({
      name: 'hook',
      description: '',
      type: 'webhook',
      config: { webhook: { disable_api_key_param: false, integration_endpoint: endpoint } },
      structure_ids: [built.structureId],
      assistant_ids: [assistant.body.assistant_id],
      organization_id: t.organizationId,
    });
    expect((await api.get(`/api/integrations/${id}`)).body.name).to.equal('hook');
    expect((await api.get('/api/integrations')).body.integrations.map((i: any) => i.integration_id)).to.include(id);
    const patched = await api.patch(`/api/integrations/${id}`, {
      description: 'd',
      config: { webhook: { disable_api_key_param: true } },
      structure_ids: [],
    });
    expect(patched.status, patched.text).to.equal(200);
    expect(patched.body).to.deep.include({ description: 'd', structure_ids: [] });
    expect(patched.body.config.webhook.disable_api_key_param).to.equal(true);

    const missing = randomUUID();
    const foreign = await api.post('/api/integrations', {
      name: 'x',
      type: 'webhook',
      config: { webhook: {} },
      structure_ids: [missing],
    });
    expect(foreign.status).to.equal(409);
    expect(foreign.body.errors[0]).to.deep.include({ path: '/body/structure_ids' });
    expect(foreign.text).to.include(missing);
    const otherTenant = await newTenant('integrations-other');
    const theirs = await as(otherTenant.key).post('/api/assistants', { name: 'theirs' });
    const foreignAssistant = await api.patch(`/api/integrations/${id}`, { assistant_ids: [theirs.body.assistant_id] });
    expect(foreignAssistant.status).to.equal(409);
    expect(foreignAssistant.body.errors[0].path).to.equal('/body/assistant_ids');
    const mismatched = await api.post('/api/integrations', { name: 'x', type: 'webhook', config: { chatapp: {} } });
    expect(mismatched.status).to.equal(400);
    expect((await api.patch(`/api/integrations/${id}`, { type: 'chatapp' })).status).to.equal(409);
    expect((await api.patch(`/api/integrations/${id}`, { config: { codehost_app: { app_id: '1' } } })).status).to.equal(
      409,
    );
    expect((await as(otherTenant.key).get(`/api/integrations/${id}`)).status).to.equal(404);
    expect((await as(otherTenant.key).get(`/api/integrations/${id}/deliveries`)).status).to.equal(404);

    expect((await api.delete(`/api/integrations/${id}`)).status).to.equal(204);
    expect((await api.get(`/api/integrations/${id}`)).status).to.equal(404);
  });

  it('chatapp and codehost_app: provider words accepted, a generated manifest, placeholder secrets for missing refs', async () => {
    const signing = await secret(api, 'signing');
    const chat = await api.post('/api/integrations', {
      name: 'bot',
      type: 'slack',
      config: {
        slack: {
          app_name: 'Ask Me',
          app_display_name: 'Asker',
          app_description: 'Answers',
          signing_secret_secret_ref: signing,
        },
      },
    });
    expect(chat.status, chat.text).to.equal(201);
    expect(chat.body.type).to.equal('chatapp');
    const detail = chat.body.config.chatapp;
    expect(chat.body.config.slack).to.deep.equal(detail);
    expect(detail.signing_secret_secret_ref).to.equal(signing);
    // The bot token had no reference: the integration made a secret for it, whose value is never shown.
    const placeholder = await api.get(`/api/secrets/${detail.bot_token_secret_ref}`);
    expect(placeholder.status).to.equal(200);
    expect(placeholder.text).to.not.include('value');
    const endpoint = `${getStack().config.publicBaseUrl}/api/integrations/${chat.body.integration_id}/handler`;
    expect(detail.app_manifest.settings.event_subscriptions.request_url).to.equal(endpoint);
    expect(detail.app_manifest.features.slash_commands[0]).to.deep.include({ command: '/ask-me', url: endpoint });
    expect(detail.app_manifest.oauth_config.scopes.bot).to.include('chat:write');
    expect(
      (await api.post('/api/integrations', { name: 'x', type: 'chatapp', config: { chatapp: { app_name: 'x' } } }))
        .status,
    ).to.equal(400);

    const app = await api.post('/api/integrations', {
      name: 'gh',
      type: 'github_app',
      config: { github_app: { app_id: '42' } },
    });
    expect(app.status, app.text).to.equal(201);
    expect(app.body.type).to.equal('codehost_app');
    expect(app.body.config.codehost_app.app_id).to.equal('42');
    expect(app.body.config.codehost_app.integration_endpoint).to.match(/\/handler$/);
    expect((await api.get(`/api/secrets/${app.body.config.codehost_app.webhook_secret_ref}`)).status).to.equal(200);
  });

  describe('webhook', () => {
    let structureId: string;

    before(async () => {
      structureId = (await structureWithBuild(t.organizationId, { files: { 'structure.py': ARGS_PROGRAM } }))
        .structureId;
    });

    it('starts every linked structure with [raw_body, query_params_json, headers_json] and every assistant with the body', async function () {
      this.timeout(300_000);
      const stop = echoingModel();
      try {
        const assistant = await api.post('/api/assistants', { name: 'hooked' });
        const hook = await api.post('/api/integrations', {
          name: 'hook',
          type: 'webhook',
          config: { webhook: {} },
          structure_ids: [structureId],
          assistant_ids: [assistant.body.assistant_id],
        });
        const id = hook.body.integration_id;
        const hit = await request('POST', `${handler(id)}?api_key=${t.key}&source=test`, undefined, {
          raw: 'plain text body',
          headers: { 'content-type': 'text/plain', cookie: 'session=1', 'x-custom': 'yes' },
        });
        expect(hit.status, hit.text).to.equal(200);
        expect(hit.body.verdict).to.equal('accepted');
        expect(hit.body.structure_run_ids).to.have.length(1);
        expect(hit.body.assistant_run_ids).to.have.length(1);
        const run = await waitForRun(t.key, hit.body.structure_run_ids[0]);
        expect(run.status).to.equal('SUCCEEDED');
        const [body, query, headers] = run.args;
        expect(body).to.equal('plain text body');
        expect(JSON.parse(query)).to.deep.equal({ source: 'test' });
        const h = JSON.parse(headers);
        expect(h).to.include({ 'content-type': 'text/plain', 'x-custom': 'yes' });
        expect(h).to.not.have.property('cookie');
        expect(h).to.not.have.property('authorization');
        const assistantRun = await api.get(`/api/assistant-runs/${hit.body.assistant_run_ids[0]}`);
        expect(assistantRun.body.input).to.equal('plain text body');

        // The Authorization header works too; the log has both, with what they started.
        const byHeader = await request('POST', handler(id), { a: 1 }, { key: t.key });
        expect(byHeader.status, byHeader.text).to.equal(200);
        const log = await deliveries(api, id);
        expect(log.map((d) => d.verdict)).to.deep.equal(['accepted', 'accepted']);
        expect(log[1].structure_run_ids).to.deep.equal(hit.body.structure_run_ids);
        expect(log[1].assistant_run_ids).to.deep.equal(hit.body.assistant_run_ids);
      } finally {
        stop();
      }
    });

    it('refuses bad keys (401), ?api_key= when disabled (403), unknown integrations (404), large bodies (413); logs each', async () => {
      const hook = await api.post('/api/integrations', {
        name: 'strict',
        type: 'webhook',
        config: { webhook: { disable_api_key_param: true } },
        structure_ids: [structureId],
      });
      const id = hook.body.integration_id;
      const noKey = await request('POST', handler(id), { refused: true });
      expect(noKey.status).to.equal(401);
      const badKey = await request('POST', handler(id), { refused: true }, { key: 'tmk_wrong' });
      expect(badKey.status).to.equal(401);
      const queryKey = await request('POST', `${handler(id)}?api_key=${t.key}`, { refused: true });
      expect(queryKey.status).to.equal(403);
      expect(queryKey.body.type).to.equal('ForbiddenError');
      const unknown = await request('POST', handler(randomUUID()), { refused: true }, { key: t.key });
      expect(unknown.status).to.equal(404);
      const big = 'x'.repeat(getStack().config.integrations.maxBodyBytes + 1);
      const tooLarge = await request('POST', handler(id), undefined, {
        key: t.key,
        raw: big,
        headers: { 'content-type': 'text/plain' },
      });
      expect(tooLarge.status).to.equal(413);
      const other = await newTenant('hook-intruder');
      expect((await request('POST', handler(id), { refused: true }, { key: other.key })).status).to.equal(404);

      const log = await deliveries(api, id);
      expect(log.map((d) => [d.verdict, d.http_status])).to.deep.equal([
        ['unauthorized', 404],
        ['too_large', 413],
        ['forbidden', 403],
        ['unauthorized', 401],
        ['unauthorized', 401],
      ]);
      for (const d of log) expect(d.structure_run_ids).to.deep.equal([]);
      const runs = await api.get(`/api/structures/${structureId}/runs?page_size=100`);
      expect(runs.body.structure_runs.every((r: any) => !r.args.includes('{"refused":true}'))).to.equal(true);
    });

    it('starts one run for duplicate deliveries (Idempotency-Key) and reports a deleted structure without failing the rest', async function () {
      this.timeout(300_000);
      const doomed = (await structureWithBuild(t.organizationId, { files: { 'structure.py': ARGS_PROGRAM } }))
        .structureId;
      const hook = await api.post('/api/integrations', {
        name: 'idem',
        type: 'webhook',
        config: { webhook: {} },
        structure_ids: [structureId, doomed],
      });
      const id = hook.body.integration_id;
      expect((await api.delete(`/api/structures/${doomed}`)).status).to.equal(204);
      const key = randomUUID();
      const first = await request('POST', handler(id), { n: 1 }, { key: t.key, headers: { 'idempotency-key': key } });
      expect(first.status, first.text).to.equal(200);
      expect(first.body.structure_run_ids).to.have.length(1);
      expect(first.body.errors).to.deep.equal([
        { type: 'NotFoundError', message: 'Structure not found', target: `structure ${doomed}` },
      ]);
      const again = await request('POST', handler(id), { n: 1 }, { key: t.key, headers: { 'idempotency-key': key } });
      expect(again.status).to.equal(200);
      expect(again.body).to.deep.include({ verdict: 'duplicate', structure_run_ids: first.body.structure_run_ids });
      const runs = await api.get(`/api/structures/${structureId}/runs?page_size=100`);
      expect(runs.body.structure_runs.filter((r: any) => r.args[0] === '{"n":1}')).to.have.length(1);
      const log = await deliveries(api, id);
      expect(log.map((d) => d.verdict)).to.deep.equal(['duplicate', 'accepted']);
      expect(log[1].errors[0].target).to.equal(`structure ${doomed}`);
    });

    it('reports a body too long for one argument as an error of the delivery instead of starting a run that cannot', async () => {
      const hook = await api.post('/api/integrations', {
        name: 'long',
        type: 'webhook',
        config: { webhook: {} },
        structure_ids: [structureId],
      });
      const long = 'y'.repeat(200_000);
      const hit = await request('POST', handler(hook.body.integration_id), undefined, {
        key: t.key,
        raw: long,
        headers: { 'content-type': 'text/plain' },
      });
      expect(hit.status, hit.text).to.equal(200);
      expect(hit.body.structure_run_ids).to.deep.equal([]);
      expect(hit.body.errors).to.have.length(1);
      expect(hit.body.errors[0]).to.include({ type: 'ValidationError', target: `structure ${structureId}` });
    });

    it(`answers 429 past the integration's rate (${'INTEGRATION_RATE_LIMIT_PER_MINUTE'}) and starts nothing`, async function () {
      this.timeout(300_000);
      const hook = await api.post('/api/integrations', {
        name: 'busy',
        type: 'webhook',
        config: { webhook: {} },
        structure_ids: [structureId],
      });
      const id = hook.body.integration_id;
      const limit = getStack().config.integrations.ratePerMinute;
      for (let i = 0; i < limit; i++) expect((await request('POST', handler(id), {})).status).to.equal(401);
      const limited = await request('POST', handler(id), { late: true }, { key: t.key });
      expect(limited.status).to.equal(429);
      expect(limited.body.type).to.equal('TooManyRequestsError');
      const log = await deliveries(api, id);
      expect(log[0]).to.deep.include({ verdict: 'rate_limited', http_status: 429, structure_run_ids: [] });
    });
  });

  describe('chatapp', () => {
    const signingSecret = 'chat-signing-secret';
    let bot: { token: string; userId: string; botId: string };
    let integrationId: string;

    before(async () => {
      bot = getStack().chatApp.addBot();
      const assistant = await api.post('/api/assistants', { name: 'chat helper' });
      const chat = await api.post('/api/integrations', {
        name: 'chat',
        type: 'chatapp',
        config: {
          chatapp: {
            app_name: 'helper',
            app_display_name: 'Helper',
            app_description: 'Helps',
            bot_token_secret_ref: await secret(api, bot.token),
            signing_secret_secret_ref: await secret(api, signingSecret),
          },
        },
        assistant_ids: [assistant.body.assistant_id],
      });
      expect(chat.status, chat.text).to.equal(201);
      integrationId = chat.body.integration_id;
    });

    const deliver = (
      body: unknown,
      headers: Record<string, string> = {},
      secretValue = signingSecret,
      timestamp?: number,
    ) => {
      const raw = JSON.stringify(body);
      return request('POST', handler(integrationId), undefined, {
        raw,
        headers: { 'content-type': 'application/json', ...signedDelivery(secretValue, raw, { timestamp }), ...headers },
      });
    };
    const message = (text: string, extra: Record<string, unknown> = {}) => ({
      type: 'event_callback',
      team_id: 'T1',
      api_app_id: 'A1',
      event_id: `Ev${randomUUID().replace(/-/g, '').slice(0, 10)}`,
      event_time: Math.floor(Date.now() / 1000),
      event: { type: 'message', channel: 'C1', user: 'U1', text, ts: `${Date.now() / 1000}`, ...extra },
    });

    it('answers URL verification, refuses bad and replayed signatures, ignores bot messages; logs each', async () => {
      const challenge = await deliver({ type: 'url_verification', token: 'legacy', challenge: 'abc123' });
      expect(challenge.status, challenge.text).to.equal(200);
      expect(challenge.body).to.deep.include({ verdict: 'challenge', challenge: 'abc123' });
      const bad = await deliver(message('hi'), {}, 'not-the-secret');
      expect(bad.status).to.equal(401);
      const replayed = await deliver(message('hi'), {}, signingSecret, Math.floor(Date.now() / 1000) - 301);
      expect(replayed.status).to.equal(401);
      expect(replayed.text).to.include('replay');
      const ownMessage = await deliver(message('my own answer', { bot_id: bot.botId }));
      expect(ownMessage.body.verdict).to.equal('ignored');
      const log = await deliveries(api, integrationId);
      expect(log.slice(0, 4).map((d) => [d.verdict, d.http_status])).to.deep.equal([
        ['ignored', 200],
        ['replayed', 401],
        ['bad_signature', 401],
        ['challenge', 200],
      ]);
      for (const d of log) expect(d.assistant_run_ids).to.deep.equal([]);
    });

    it('acknowledges at once while the chat app is slow, then posts the answer in the thread; a retried event starts nothing', async function () {
      this.timeout(300_000);
      const stop = echoingModel();
      const chatApp = getStack().chatApp;
      chatApp.hold(true);
      try {
        const event = message(`<@${bot.userId}> what is 2+2?`);
        const acked = await deliver(event);
        expect(acked.status, acked.text).to.equal(200);
        expect(acked.body.verdict).to.equal('accepted');
        // Slack retries what it thinks was not acknowledged: the same event id starts nothing again.
        const retried = await deliver(event, { 'x-slack-retry-num': '1', 'x-slack-retry-reason': 'http_timeout' });
        expect(retried.body.verdict).to.equal('duplicate');
        // The answer is on its way while the chat app holds it: the acknowledgement did not wait for it.
        await chatApp.arrived((p) => p.text === 'echo: what is 2+2?');
        chatApp.hold(false);
        const post = await chatApp.waitForPost((p) => p.text === 'echo: what is 2+2?');
        expect(post).to.deep.include({ token: bot.token, channel: 'C1', thread_ts: event.event.ts });
        const done = await deliveryEnd(api, integrationId, acked.body.delivery_id);
        expect(done.status).to.equal('SUCCEEDED');
        expect(done.assistant_run_ids).to.have.length(1);
        const run = await api.get(`/api/assistant-runs/${done.assistant_run_ids[0]}`);
        expect(run.body.input).to.equal('what is 2+2?');
        // The channel thread is one of our threads: the next message in it continues the conversation.
        const thread = await api.get(`/api/threads/${run.body.thread_id}/messages`);
        expect(thread.body.messages.map((m: any) => JSON.parse(m.output).value)).to.deep.equal(['echo: what is 2+2?']);
        const followUp = message('and 3+3?', { thread_ts: event.event.ts });
        const second = await deliver(followUp);
        const secondDone = await deliveryEnd(api, integrationId, second.body.delivery_id);
        const secondRun = await api.get(`/api/assistant-runs/${secondDone.assistant_run_ids[0]}`);
        expect(secondRun.body.thread_id).to.equal(run.body.thread_id);
        const posts = chatApp.posts.filter((p) => p.channel === 'C1' && p.thread_ts === event.event.ts);
        expect(posts.map((p) => p.text)).to.deep.equal(['echo: what is 2+2?', 'echo: and 3+3?']);

        // A slash command is acknowledged with a note for the user and answered in its channel.
        const form = new URLSearchParams({
          command: '/helper',
          text: 'slash question',
          channel_id: 'C2',
          user_id: 'U1',
          trigger_id: `trig-${randomUUID()}`,
        }).toString();
        const slash = await request('POST', handler(integrationId), undefined, {
          raw: form,
          headers: { 'content-type': 'application/x-www-form-urlencoded', ...signedDelivery(signingSecret, form) },
        });
        expect(slash.status, slash.text).to.equal(200);
        expect(slash.body).to.include({ verdict: 'accepted', text: 'Working on it…' });
        await deliveryEnd(api, integrationId, slash.body.delivery_id);
        expect((await chatApp.waitForPost((p) => p.channel === 'C2')).text).to.equal('echo: slash question');

        // A message of the bot's own user (auth.test says who it is) starts nothing, even without a bot_id.
        const own = await deliver(message('an answer of mine', { user: bot.userId }));
        const ownDone = await deliveryEnd(api, integrationId, own.body.delivery_id);
        expect(ownDone.assistant_run_ids).to.deep.equal([]);
        expect(ownDone.errors.map((e: any) => e.type)).to.deep.equal(['OwnMessage']);
      } finally {
        chatApp.hold(false);
        stop();
      }
    });
  });

  describe('codehost_app', () => {
    const webhookSecret = 'gh-webhook-secret';

    it('refuses a bad signature; a push on a followed branch deploys that commit with an installation token; other events run the structures', async function () {
      this.timeout(400_000);
      const codehostApp = getStack().codehostApp;
      const app = codehostApp.addApp();
      const owner = `o-${t.organizationId.slice(0, 8)}`;
      const version = (n: number) => ({
        'structure_config.yaml': configFile('python3', '  main_file: src/main.py\n'),
        'src/main.py': `import sys\nprint("version ${n}", sys.argv[1:2])\n`,
      });
      const [first] = gitRepository(owner, 'app-repo', [version(1), version(2)]);
      const followed = await api.post('/api/structures', {
        name: 'followed',
        code: { codehost: { owner, name: 'app-repo', push: { branch: 'main' } } },
      });
      expect(followed.status, followed.text).to.equal(201);
      await waitForDeployment(t.key, followed.body.latest_deployment_id);
      const integration = await api.post('/api/integrations', {
        name: 'gh',
        type: 'codehost_app',
        config: {
          codehost_app: {
            app_id: app.appId,
            private_key_secret_ref: await secret(api, app.privateKeyPem),
            webhook_secret_ref: await secret(api, webhookSecret),
          },
        },
        structure_ids: [followed.body.structure_id],
      });
      expect(integration.status, integration.text).to.equal(201);
      const id = integration.body.integration_id;
      const push = JSON.stringify({
        ref: 'refs/heads/main',
        after: first,
        repository: { name: 'app-repo', full_name: `${owner}/app-repo`, owner: { login: owner } },
        installation: { id: 777 },
      });

      const forged = await request('POST', handler(id), undefined, {
        raw: push,
        headers: signedCodehostDelivery('wrong-secret', push, 'push'),
      });
      expect(forged.status).to.equal(401);

      const headers = signedCodehostDelivery(webhookSecret, push, 'push');
      const accepted = await request('POST', handler(id), undefined, { raw: push, headers });
      expect(accepted.status, accepted.text).to.equal(200);
      const again = await request('POST', handler(id), undefined, { raw: push, headers });
      expect(again.body.verdict).to.equal('duplicate');
      const done = await deliveryEnd(api, id, accepted.body.delivery_id);
      expect(done.status, JSON.stringify(done)).to.equal('SUCCEEDED');
      expect(done.deployment_ids).to.have.length(1);
      const deployment = await waitForDeployment(t.key, done.deployment_ids[0]);
      expect(deployment.status, JSON.stringify(deployment.status_detail)).to.equal('SUCCEEDED');
      expect(deployment.code_source.codehost.commit_sha).to.equal(first);
      expect(codehostApp.issued.filter((i) => i.appId === app.appId)).to.deep.include.members([
        { appId: app.appId, installationId: 777, token: codehostApp.issued.find((i) => i.appId === app.appId)!.token },
      ]);

      const issue = JSON.stringify({ action: 'opened', issue: { number: 1 } });
      const opened = await request('POST', handler(id), undefined, {
        raw: issue,
        headers: signedCodehostDelivery(webhookSecret, issue, 'issues'),
      });
      const ran = await deliveryEnd(api, id, opened.body.delivery_id);
      expect(ran.structure_run_ids).to.have.length(1);
      const run = await waitForRun(t.key, ran.structure_run_ids[0], undefined, 60_000);
      expect(run.args[0]).to.equal(issue);
      expect(JSON.parse(run.args[2])).to.include({ 'x-github-event': 'issues' });
      const log = await deliveries(api, id);
      expect(log.map((d) => d.verdict)).to.deep.equal(['accepted', 'duplicate', 'accepted', 'bad_signature']);
    });

    it('runs a delivery whose row commits only after its workflow started (the start waits for the commit)', async function () {
      this.timeout(120_000);
      const { ds, env } = getStack();
      const app = await quietCodehostApp(t.key);
      // A deferred trigger holds the commit of this integration's deliveries until the test lets go of a lock:
      // the handler's transaction inserts the row, Temporal accepts the workflow, and the COMMIT then waits,
      // as it can on a loaded database.
      const tag = app.integrationId.replace(/-/g, '');
      const lockKey = Number.parseInt(tag.slice(0, 7), 16);
      const holder = ds.createQueryRunner();
      await holder.connect();
      await holder.query(`SELECT pg_advisory_lock($1)`, [lockKey]);
      await ds.query(`CREATE FUNCTION hold_commit_${tag}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN PERFORM pg_advisory_xact_lock_shared(${lockKey}); RETURN NULL; END $$`);
      await ds.query(`CREATE CONSTRAINT TRIGGER hold_commit_${tag} AFTER INSERT ON integration_deliveries
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.integration_id::text = '${app.integrationId}')
        EXECUTE FUNCTION hold_commit_${tag}()`);
      let released = false;
      const release = async () => {
        if (released) return;
        released = true;
        await holder.query(`SELECT pg_advisory_unlock($1)`, [lockKey]);
        await holder.release();
      };
      try {
        const sent = app.send();
        // The workflow exists (the commit is held): wait until its first activity, the start, has run or is
        // running, then let the commit through.
        const handle = await (async () => {
          const deadline = Date.now() + 30_000;
          for (;;) {
            for await (const wf of env.client.workflow.list({
              query: `TarmacOrganizationId = '${t.organizationId}' AND TarmacResourceKind = 'integration-delivery'`,
            })) {
              return env.client.workflow.getHandle(wf.workflowId);
            }
            if (Date.now() > deadline) throw new Error('the delivery workflow never appeared');
            await new Promise((r) => setTimeout(r, 100));
          }
        })();
        const deadline = Date.now() + 30_000;
        for (;;) {
          const wf = await handle.describe();
          const starting = (wf.raw.pendingActivities ?? []).some(
            (a) => a.activityType?.name === 'startIntegrationDelivery' && a.state === 2 /* STARTED */,
          );
          if (wf.status.name !== 'RUNNING' || starting || Date.now() > deadline) break;
          await new Promise((r) => setTimeout(r, 50));
        }
        await new Promise((r) => setTimeout(r, 100)); // it has looked at least once
        await release();
        const reply = await sent;
        expect(reply.status, reply.text).to.equal(200);
        expect(await handle.result()).to.equal('SUCCEEDED');
        expect((await app.ended(reply.body.delivery_id)).status).to.equal('SUCCEEDED');
      } finally {
        await release();
        await ds.query(`DROP TRIGGER IF EXISTS hold_commit_${tag} ON integration_deliveries`);
        await ds.query(`DROP FUNCTION IF EXISTS hold_commit_${tag}()`);
      }
    });

    it('ends a push delivery FAILED when the code host refuses the app (a JWT of an unknown app): nothing deployed', async function () {
      this.timeout(300_000);
      const { codehostApp } = getStack();
      const app = codehostApp.addApp();
      const owner = `r-${t.organizationId.slice(0, 8)}`;
      gitRepository(owner, 'refused', [
        { 'structure_config.yaml': configFile('python3', '  main_file: m.py\n'), 'm.py': '' },
      ]);
      const followed = await api.post('/api/structures', {
        name: 'refused',
        code: { codehost: { owner, name: 'refused', push: { branch: 'main' } } },
      });
      const integration = await api.post('/api/integrations', {
        name: 'wrong app id',
        type: 'codehost_app',
        config: {
          codehost_app: {
            app_id: '1', // not the app whose key signs
            private_key_secret_ref: await secret(api, app.privateKeyPem),
            webhook_secret_ref: await secret(api, webhookSecret),
          },
        },
        structure_ids: [followed.body.structure_id],
      });
      const push = JSON.stringify({
        ref: 'refs/heads/main',
        after: 'a'.repeat(40),
        repository: { name: 'refused', owner: { login: owner } },
        installation: { id: 9 },
      });
      const hit = await request('POST', handler(integration.body.integration_id), undefined, {
        raw: push,
        headers: signedCodehostDelivery(webhookSecret, push, 'push'),
      });
      const done = await deliveryEnd(api, integration.body.integration_id, hit.body.delivery_id);
      expect(done.status).to.equal('FAILED');
      expect(done.status_detail.reason).to.equal('InstallationTokenRefused');
      expect(done.status_detail.message).to.include('401');
      expect(done.deployment_ids).to.deep.equal([]);
    });
  });
});
