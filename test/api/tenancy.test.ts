// Walks every declared route with a second organization's key, pointing at the first organization's
// records: every one must be a 404 (or a list that does not show them). New routes are covered
// automatically; a route with a path parameter this file does not know fails the test.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { allRoutes } from '../../src/api/http/route';
import { Asset, Bucket, Waitpoint } from '../../src/persistence/entities';
import { structureWithBuild } from '../harness/builds';
import { as } from '../harness/client';
import { waitForRun } from '../harness/runs';
import { getStack, newTenant } from '../harness/stack';

/** A chat message for a model no test scripts: the provider refuses it, so nothing is answered. */
const chatBody = {
  messages: [
    {
      type: 'Message',
      role: 'user',
      usage: { type: 'Usage', input_tokens: null, output_tokens: null },
      content: [{ type: 'TextMessageContent', artifact: { type: 'TextArtifact', value: 'hi' } }],
    },
  ],
  tools: [],
  driver_configuration: { model: 'local/tenancy-unscripted' },
};

/** Routes that name no record of an organization: the configured models are settings every organization shares. */
const SHARED_BY_ALL = ['GetModel'];

/** A person's session: a key has none, so these answer 404 to any key (test/api/sessions.test.ts). */
const SESSION_ONLY = ['GetCurrentSession', 'DeleteCurrentSession'];

/** Streams of the caller's organization that stay open: read for a moment, then left. */
const OPEN_STREAMS = ['GetRunChangesSSE'];

/** The status and what a stream sent in its first seconds (organization A's runs may change meanwhile). */
async function firstSecondsOf(url: string, key: string, ms = 2_000): Promise<{ status: number; text: string }> {
  const abort = new AbortController();
  const res = await fetch(url, { headers: { authorization: `Bearer ${key}` }, signal: abort.signal });
  let text = '';
  const reader = res.body!.getReader();
  const stop = setTimeout(() => abort.abort(), ms);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += Buffer.from(value).toString();
    }
  } catch {
    // aborted after `ms`: what came is enough
  } finally {
    clearTimeout(stop);
  }
  return { status: res.status, text };
}

/** A valid body per operation, so requests get past validation to the ownership check. */
const bodies: Record<string, unknown> = {
  CreateApiKey: { name: 'k' },
  CompleteWaitpoint: { approved: true },
  CreateOrganizationApiKey: { name: 'k' },
  UpdateApiKey: { name: 'k' },
  UpdateOrganizationMember: { role: 'viewer' },
  CreateInvite: { email: 'someone@example.test' },
  RespondToInvite: { response: 'ACCEPTED' },
  UpdateSecret: { name: 'x' },
  UpdateBucket: { name: 'x' },
  CreateAsset: { name: 'x' },
  CreateAssetUrl: { operation: 'GET' },
  CreateStructure: { name: 'x' },
  CreateStructureSchedule: { schedule_expression: 'rate(1 day)' },
  CreateFunctionSchedule: { schedule_expression: 'rate(1 day)' },
  CreateAssistantSchedule: { schedule_expression: 'rate(1 day)' },
  UpdateStructure: { name: 'x' },
  CreateStructureDeployment: { force: true },
  CreateFunction: { name: 'x' },
  UpdateFunction: { name: 'x' },
  CreateFunctionDeployment: { force: true },
  CreateTool: { name: 'x' },
  UpdateTool: { name: 'x' },
  CreateToolDeployment: { force: true },
  CreateRule: { name: 'x', rule: 'x' },
  UpdateRule: { name: 'x' },
  CreateRuleset: { name: 'x' },
  UpdateRuleset: { name: 'x', rule_ids: [] },
  CreateThread: { name: 'x' },
  UpdateThread: { name: 'x', messages: [] },
  CreateThreadMessage: { input: 'x', output: 'x' },
  UpdateMessage: { input: 'x' },
  CreateAssistant: { name: 'x' },
  UpdateAssistant: { name: 'x' },
  CreateAssistantRun: { input: 'x' },
  CreateStructureRun: { args: [] },
  CreateFunctionExecutionPost: { any: 'json' },
  RunToolActivity: { text: 'hi' },
  CreateEvents: { type: 'x', payload: {}, timestamp: 1 },
  CreateSpans: [],
  QueryKnowledgeBase: { query: 'x' },
  SearchKnowledgeBase: { query: 'x' },
  UpdateRetriever: { name: 'x' },
  QueryRetriever: { query: 'x' },
  UpdateKnowledgeBase: { name: 'x' },
  CreateIntegration: { name: 'x', type: 'webhook', config: { webhook: {} } },
  UpdateIntegration: { name: 'x' },
  UpdateDataConnector: { name: 'x' },
  CreateChatMessage: chatBody,
  CreateChatMessageStream: chatBody,
  CreateCheckoutSession: { price_lookup_key: 'tenancy-unknown-price' },
};

describe('tenancy: another organization sees nothing', () => {
  it('answers 404 on every route that names a record of another organization, and lists never show them', async function () {
    this.timeout(60_000);
    const a = await newTenant('owner');
    const b = await newTenant('intruder');
    const { ds } = getStack();
    const apiA = as(a.key);

    // Records of organization A, one of each kind.
    const keyA = await apiA.post(`/api/organizations/${a.organizationId}/api-keys`, { name: 'org key' });
    const invite = await apiA.post(`/api/organizations/${a.organizationId}/invites`, {
      email: `invitee-${randomUUID()}@example.test`,
    });
    const secret = await apiA.post('/api/secrets', { name: 'S', value: 'v' });
    const now = new Date();
    const bucket = await ds.getRepository(Bucket).save({
      bucket_id: randomUUID(),
      organization_id: a.organizationId,
      name: 'b',
      created_by: a.userId,
      created_at: now,
      updated_at: now,
    });
    await ds.getRepository(Asset).save({
      bucket_id: bucket.bucket_id,
      name: 'dir/file.txt',
      organization_id: a.organizationId,
      size: null,
      created_by: a.userId,
      created_at: now,
      updated_at: now,
    });
    const structure = await structureWithBuild(a.organizationId, {
      files: { 'structure.py': 'print(1)\n' },
      webhookEnabled: true,
    });
    const run = await apiA.post(`/api/structures/${structure.structureId}/runs`, { args: [] });
    await waitForRun(a.key, run.body.structure_run_id);
    const runEvents = await apiA.get(`/api/structure-runs/${run.body.structure_run_id}/events`);
    const fn = await apiA.post('/api/functions', { name: 'F' });
    const built = await structureWithBuild(a.organizationId, {
      kind: 'function',
      files: { 'f.py': 'def handler(event):\n    return 1\n' },
      mainFile: 'f.py',
    });
    const executed = await apiA.post(`/api/functions/${built.structureId}/execute`, {});
    expect(executed.status, executed.text).to.equal(200);
    const [functionRun] = (await apiA.get(`/api/functions/${built.structureId}/runs`)).body.function_runs;
    const tool = await apiA.post('/api/tools', { name: 'T' });
    const builtTool = await structureWithBuild(a.organizationId, {
      kind: 'tool',
      mainFile: 't.py',
      files: {
        't.py': 'class T:\n    def echo(self, params):\n        return params\n\ndef init_tool():\n    return T()\n',
      },
    });
    const called = await apiA.post(`/api/tools/${builtTool.structureId}/activities/echo`, { text: 'hi' });
    expect(called.body, called.text).to.deep.equal({ text: 'hi' });
    const [toolRun] = (await apiA.get(`/api/tools/${builtTool.structureId}/runs`)).body.tool_runs;
    const rule = await apiA.post('/api/rules', { name: 'R', rule: 'Be kind.' });
    const ruleset = await apiA.post('/api/rulesets', { name: 'RS', alias: 'rs', rule_ids: [rule.body.rule_id] });
    const thread = await apiA.post('/api/threads', { name: 'T', alias: 't', messages: [{ input: 'i', output: 'o' }] });
    const [message] = (await apiA.get(`/api/threads/${thread.body.thread_id}/messages`)).body.messages;
    const assistant = await apiA.post('/api/assistants', {
      name: 'A',
      ruleset_ids: [ruleset.body.ruleset_id],
      tool_ids: [builtTool.structureId],
    });
    const assistantRun = await apiA.post(`/api/assistants/${assistant.body.assistant_id}/runs`, {
      input: 'hi',
      tool_ids: [],
    });
    expect(assistantRun.status, assistantRun.text).to.equal(201);
    const kb = await apiA.post('/api/knowledge-bases', {
      name: 'KB',
      type: 'gtc_pg_vector',
      config: { gtc_pg_vector: {} },
      asset_paths: [`${bucket.bucket_id}/dir/`],
    });
    expect(kb.status, kb.text).to.equal(201);
    const kbJob = await apiA.post(`/api/knowledge-bases/${kb.body.knowledge_base_id}/knowledge-base-jobs`);
    expect(kbJob.status, kbJob.text).to.equal(202);
    const kbQuery = await apiA.post(`/api/knowledge-bases/${kb.body.knowledge_base_id}/query`, { query: 'file' });
    expect(kbQuery.status, kbQuery.text).to.equal(200);
    const connection = await apiA.post('/api/connections', {
      type: 'codehost',
      credentials: { codehost: { auth_code: getStack().codehost.issueCode() } },
    });
    expect(connection.status, connection.text).to.equal(201);
    const integration = await apiA.post('/api/integrations', {
      name: 'I',
      type: 'webhook',
      config: { webhook: {} },
      structure_ids: [structure.structureId],
      assistant_ids: [assistant.body.assistant_id],
    });
    expect(integration.status, integration.text).to.equal(201);
    // A delivery of A's integration (its handler as A's key), for the routes that name one.
    const handled = await apiA.post(`/api/integrations/${integration.body.integration_id}/handler`, { x: 1 });
    expect(handled.status, handled.text).to.be.within(200, 299);
    const deliveries = await apiA.get(`/api/integrations/${integration.body.integration_id}/deliveries`);
    expect(deliveries.body.deliveries, deliveries.text).to.have.length.greaterThan(0);
    const connector = await apiA.post('/api/data-connectors', {
      name: 'DC',
      type: 'data_lake',
      config: { data_lake: { bucket_id: bucket.bucket_id, asset_paths: ['dir/'] } },
    });
    expect(connector.status, connector.text).to.equal(201);
    // The job may still run: a search without chunks asks no model, so the reply is withdrawn if unused.
    const answer = { model: 'test-model', text: 'An answer.' };
    getStack().modelProvider.script(answer);
    const kbSearch = await apiA.post(`/api/knowledge-bases/${kb.body.knowledge_base_id}/search`, { query: 'file' });
    expect(kbSearch.status, kbSearch.text).to.equal(200);
    getStack().modelProvider.withdraw(answer);
    const retriever = await apiA.post('/api/retrievers', {
      name: 'R',
      retriever_components: [
        { name: 'kb', type: 'knowledge_base', config: { knowledge_base_id: kb.body.knowledge_base_id } },
      ],
    });
    expect(retriever.status, retriever.text).to.equal(201);
    const component = await apiA.post('/api/retriever-components', {
      name: 'kb',
      type: 'knowledge_base',
      config: { knowledge_base_id: kb.body.knowledge_base_id },
    });
    expect(component.status, component.text).to.equal(201);
    const schedule = await apiA.post(`/api/structures/${structure.structureId}/schedules`, {
      schedule_expression: 'rate(1 day)',
      enabled: false,
    });
    expect(schedule.status, schedule.text).to.equal(201);
    // A waitpoint of A (a token of its structure run, as the run's code makes one).
    const waitpointId = randomUUID();
    await getStack()
      .ds.getRepository(Waitpoint)
      .insert({
        waitpoint_id: waitpointId,
        organization_id: a.organizationId,
        run_id: run.body.structure_run_id,
        kind: 'token',
        status: 'WAITING',
        subject: { description: 'of A' },
        idempotency_key: null,
        timeout_seconds: 3600,
        expires_at: new Date(Date.now() + 3_600_000),
        completion: null,
        completed_by: null,
        completed_at: null,
        created_by: a.userId,
        created_at: new Date(),
        updated_at: new Date(),
      });
    const ids: Record<string, string> = {
      waitpoint_id: waitpointId,
      organization_id: a.organizationId,
      integration_id: integration.body.integration_id,
      delivery_id: deliveries.body.deliveries[0].delivery_id,
      user_id: a.userId,
      api_key_id: keyA.body.api_key_id,
      invite_id: invite.body.invite_id,
      secret_id: secret.body.secret_id,
      bucket_id: bucket.bucket_id,
      name: 'dir/file.txt',
      function_id: fn.body.function_id,
      tool_id: tool.body.tool_id,
      deployment_id: structure.deploymentId,
      structure_id: structure.structureId,
      structure_run_id: run.body.structure_run_id,
      run_id: run.body.structure_run_id,
      function_run_id: functionRun.function_run_id,
      tool_run_id: toolRun.tool_run_id,
      activity_name: 'echo',
      event_id: runEvents.body.events[0].event_id,
      rule_id: rule.body.rule_id,
      ruleset_id: ruleset.body.ruleset_id,
      thread_id: thread.body.thread_id,
      message_id: message.message_id,
      assistant_id: assistant.body.assistant_id,
      assistant_run_id: assistantRun.body.assistant_run_id,
      knowledge_base_id: kb.body.knowledge_base_id,
      knowledge_base_job_id: kbJob.body.knowledge_base_job_id,
      knowledge_base_query_id: kbQuery.body.knowledge_base_query_id,
      connection_id: connection.body.connection_id,
      data_connector_id: connector.body.data_connector_id,
      data_job_id: connector.body.data_job_id,
      knowledge_base_search_id: kbSearch.body.knowledge_base_search_id,
      retriever_id: retriever.body.retriever_id,
      retriever_component_id: component.body.retriever_component_id,
      schedule_id: schedule.body.schedule_id,
    };
    const secretsOfA = Object.values(ids).filter((v) => v !== 'dir/file.txt');

    const apiB = as(b.key);
    bodies.CreateConnection = {
      type: 'codehost',
      credentials: { codehost: { auth_code: getStack().codehost.issueCode() } },
    };
    let checked = 0;
    for (const r of allRoutes()) {
      if (r.auth === 'none') continue; // public or presigned: authenticated by signature, tested in buckets
      if (SHARED_BY_ALL.includes(r.operationId)) continue;
      if (SESSION_ONLY.includes(r.operationId)) {
        const res = await apiB[r.method](`/api${r.path}`);
        expect(res.status, `${r.operationId}: ${res.text}`).to.equal(404);
        checked++;
        continue;
      }
      if (OPEN_STREAMS.includes(r.operationId)) {
        const seen = await firstSecondsOf(`${getStack().baseUrl}/api${r.path}`, b.key);
        expect(seen.status, r.operationId).to.equal(200);
        for (const id of secretsOfA) expect(seen.text, `${r.operationId} shows a record of A`).to.not.include(id);
        checked++;
        continue;
      }
      const names = Object.keys(r.params ?? {});
      const path = r.path.replace(/\{(\w+)\}/g, (_, n: string) => {
        if (!(n in ids)) throw new Error(`tenancy test: no record of organization A for {${n}} in ${r.operationId}`);
        return ids[n];
      });
      const res = await (r.method === 'get' || r.method === 'delete'
        ? apiB[r.method](`/api${path}`)
        : apiB[r.method](`/api${path}`, bodies[r.operationId] ?? {}));
      if (names.length) {
        expect(res.status, `${r.operationId} ${r.method.toUpperCase()} ${path}: ${res.text}`).to.equal(404);
        expect(res.body.type).to.equal('NotFoundError');
      } else if (r.operationId === 'ListAuditEvents') {
        // B's log names A's ids only in B's own refused attempts above.
        expect(res.status, res.text).to.equal(200);
        for (const e of res.body.audit_events) expect([e.user_id, e.status], e.path).to.deep.equal([b.userId, 404]);
        checked++;
      } else if (r.method === 'get') {
        expect(res.status, `${r.operationId}: ${res.text}`).to.equal(200);
        for (const id of secretsOfA) expect(res.text, `${r.operationId} shows a record of A`).to.not.include(id);
      }
      checked++;
    }
    expect(checked).to.be.greaterThan(20);

    // Nothing was changed or deleted by the intruder's attempts.
    expect((await apiA.get(`/api/api-keys/${ids.api_key_id}`)).body.name).to.equal('org key');
    expect((await apiA.get(`/api/invites/${ids.invite_id}`)).body.status).to.equal('PENDING');
    expect((await apiA.get(`/api/secrets/${ids.secret_id}`)).body.name).to.equal('S');
    expect(await ds.getRepository(Bucket).countBy({ bucket_id: bucket.bucket_id })).to.equal(1);
    expect((await apiA.get(`/api/rules/${ids.rule_id}`)).body.name).to.equal('R');
    const scheduleNow = (await apiA.get(`/api/structures/${ids.structure_id}/schedules/${ids.schedule_id}`)).body;
    expect(scheduleNow.enabled, 'the schedule stays paused').to.equal(false);
    expect((await apiA.get(`/api/retriever-components/${ids.retriever_component_id}`)).body.name).to.equal('kb');
    expect((await apiA.get(`/api/rulesets/${ids.ruleset_id}`)).body).to.deep.include({
      name: 'RS',
      rule_ids: [ids.rule_id],
    });
    expect((await apiA.get(`/api/threads/${ids.thread_id}`)).body).to.include({ name: 'T', message_count: 1 });
    expect((await apiA.get(`/api/messages/${ids.message_id}`)).body.input).to.equal('i');
    expect((await apiA.get(`/api/assistants/${ids.assistant_id}`)).body.name).to.equal('A');
    expect((await apiA.get(`/api/knowledge-bases/${ids.knowledge_base_id}`)).body.name).to.equal('KB');
    expect((await apiA.get(`/api/knowledge-base-queries/${ids.knowledge_base_query_id}`)).status).to.equal(200);
    expect((await apiA.get(`/api/connections/${ids.connection_id}/access-token`)).status).to.equal(200);
    expect((await apiA.get(`/api/data-connectors/${ids.data_connector_id}`)).body.name).to.equal('DC');
    expect((await apiA.get(`/api/data-jobs/${ids.data_job_id}`)).status).to.equal(200);
    // Nor can a connector read or write another organization's bucket.
    const foreignLake = await apiB.post('/api/data-connectors', {
      name: 'B',
      type: 'data_lake',
      config: { data_lake: { bucket_id: bucket.bucket_id } },
    });
    expect(foreignLake.status, foreignLake.text).to.equal(409);
    const foreignTarget = await apiB.post('/api/data-connectors', {
      name: 'B',
      type: 'webscraper',
      bucket_id: bucket.bucket_id,
      config: { webscraper: { urls: ['http://127.0.0.1:9/'] } },
    });
    expect(foreignTarget.status, foreignTarget.text).to.equal(409);
    expect((await apiA.get(`/api/knowledge-base-searches/${ids.knowledge_base_search_id}`)).status).to.equal(200);
    expect((await apiA.get(`/api/retrievers/${ids.retriever_id}`)).body.name).to.equal('R');
    expect(
      (
        await apiB.post('/api/knowledge-bases', {
          name: 'B',
          type: 'gtc_pg_vector',
          config: { gtc_pg_vector: {} },
          asset_paths: [`${bucket.bucket_id}/`],
        })
      ).status,
    ).to.equal(409);
    // Another organization's ids cannot be named in an assistant or its runs: a body naming records the
    // organization does not have is a 409, as if they did not exist.
    const borrowing = await apiB.post('/api/assistants', { name: 'B', ruleset_ids: [ids.ruleset_id] });
    expect(borrowing.status, borrowing.text).to.equal(409);
    const ownB = await apiB.post('/api/assistants', { name: 'B' });
    expect(
      (
        await apiB.post(`/api/assistants/${ownB.body.assistant_id}/runs`, {
          input: 'x',
          additional_tool_ids: [builtTool.structureId],
        })
      ).status,
    ).to.equal(409);
    expect(
      (await apiB.post(`/api/assistants/${ownB.body.assistant_id}/runs`, { input: 'x', thread_id: ids.thread_id }))
        .status,
    ).to.equal(409);
    // An integration's public handler: another organization's key finds nothing; its ids cannot be linked.
    const hit = await apiB.post(`/api/integrations/${ids.integration_id}/handler`, { x: 1 });
    expect(hit.status, hit.text).to.equal(404);
    expect((await apiA.get(`/api/integrations/${ids.integration_id}`)).body.name).to.equal('I');
    const linking = await apiB.post('/api/integrations', {
      name: 'B',
      type: 'webhook',
      config: { webhook: {} },
      structure_ids: [structure.structureId],
    });
    expect(linking.status, linking.text).to.equal(409);
    // Another organization's aliases and filters see nothing either.
    expect((await apiB.get('/api/rulesets?alias=rs')).body.rulesets).to.deep.equal([]);
    expect((await apiB.get('/api/threads?alias=t')).body.threads).to.deep.equal([]);
    expect((await apiB.get(`/api/rules?ruleset_id=${ids.ruleset_id}`)).status).to.equal(404);
    expect((await apiB.post('/api/rulesets', { name: 'steal', rule_ids: [ids.rule_id] })).status).to.equal(409);
    for (const kind of ['structure', 'function', 'tool']) {
      const res = await apiA.get(`/api/${kind}s/${ids[`${kind}_id`]}`);
      expect(res.body.name, kind).to.not.equal('x');
      expect((await apiA.get(`/api/${kind}s/${ids[`${kind}_id`]}/deployments`)).body.deployments, kind).to.have.length(
        1,
      );
    }
  });
});
