// Tools of `mcp` code (docs/mcp.md#mcp-servers-as-tools) through HTTP on the real stack, against a remote MCP
// server built with the official SDK (test/harness/remote-mcp-server.ts): deploying lists its tools, an activity
// calls one (its header's secret resolved), tool errors and oversized answers end the call FAILED with why, an
// assistant's model calls it through a function call (each call once, in the run's events), a cancel stops a
// call in flight, and the outbound policy refuses a server on the platform's own address.
import { expect } from 'chai';
import { as } from '../harness/client';
import { getStack, newTenant } from '../harness/stack';
import { startRemoteMcpServer, type RemoteMcpServer } from '../harness/remote-mcp-server';
import { waitForDeployment } from '../fixtures/projects';
import { waitForAssistantRun } from '../harness/runs';

describe('tools of mcp code: a remote MCP server as a tool', function () {
  this.timeout(120_000);
  let remote: RemoteMcpServer;
  before(async () => {
    remote = await startRemoteMcpServer();
  });
  after(() => remote.close());

  /** A tenant with a secret holding the server's token, and a deployed tool of the remote server. */
  async function remoteTool(name = 'Remote') {
    const t = await newTenant();
    const api = as(t.key);
    const secret = await api.post('/api/secrets', { name: `token-${name}`, value: 'Bearer s3cret' });
    expect(secret.status, secret.text).to.equal(201);
    const tool = await api.post('/api/tools', {
      name,
      description: 'A team server',
      code: {
        mcp: {
          url: remote.url,
          headers: [{ name: 'Authorization', value: secret.body.secret_id, source: 'secret_ref' }],
        },
      },
    });
    expect(tool.status, tool.text).to.equal(201);
    const deployment = await waitForDeployment(t.key, tool.body.latest_deployment_id);
    return { t, api, tool: tool.body, deployment };
  }

  it('deploying lists its tools; an activity calls one with the secret header; errors and oversized answers are FAILED calls', async () => {
    const { api, tool, deployment } = await remoteTool();
    // The generated client knows github, data_lake and default only: `default: {}` rides beside `mcp`.
    expect(tool.code).to.deep.equal({
      mcp: {
        url: remote.url,
        headers: [{ name: 'Authorization', value: (tool.code.mcp.headers[0] as any).value, source: 'secret_ref' }],
      },
      default: {},
    });
    expect(deployment.status, JSON.stringify(deployment.status_detail)).to.equal('SUCCEEDED');
    expect(deployment.code_source).to.deep.equal({ mcp: { url: remote.url } });
    expect(deployment.status_detail.mcp_server).to.deep.equal({ name: 'test-remote', version: '7.1.0' });
    expect(deployment.status_detail.mcp_tools.map((x: any) => x.name)).to.deep.equal([
      'add',
      'whoami',
      'fail',
      'huge',
      'slow',
    ]);

    const doc = await api.get(`/api/tools/${tool.tool_id}/openapi`);
    expect(doc.status, doc.text).to.equal(200);
    expect(doc.body.info.title).to.equal('Remote');
    expect(doc.body.paths['/activities/add'].post.requestBody.content['application/json'].schema).to.deep.include({
      required: ['a', 'b'],
    });

    const whoami = await api.post(`/api/tools/${tool.tool_id}/activities/whoami`, {});
    expect(whoami.status, whoami.text).to.equal(200);
    expect(whoami.body).to.deep.include({ type: 'TextArtifact', value: 'Bearer s3cret' });
    const added = await api.post(`/api/tools/${tool.tool_id}/activities/add`, { a: 2, b: 40 });
    expect(added.body.value).to.equal('42');
    expect(remote.calls.filter((c) => c.name === 'add' && c.args.b === 40)).to.have.length(1);

    const failed = await api.post(`/api/tools/${tool.tool_id}/activities/fail`, {});
    expect(failed.body.error).to.include('ToolError: the tool failed on purpose');
    const run = await api.get(`/api/tool-runs/${failed.body.tool_run_id}`);
    expect(run.body.status).to.equal('FAILED');
    const logs = await api.get(`/api/tool-runs/${failed.body.tool_run_id}/logs`);
    expect((logs.body.logs as string[]).join('\n')).to.include(`tools/call fail on ${remote.url}`);

    const huge = await api.post(`/api/tools/${tool.tool_id}/activities/huge`, {});
    expect(huge.body.error).to.include('ResponseTooLarge');

    const unknown = await api.post(`/api/tools/${tool.tool_id}/activities/nope`, {});
    expect(unknown.status, unknown.text).to.equal(404);

    // Another organization sees none of it.
    const other = await newTenant();
    expect((await as(other.key).get(`/api/tools/${tool.tool_id}`)).status).to.equal(404);
  });

  it('is refused where it cannot work: not for structures, no reserved header, secrets that exist, no switch to code', async () => {
    const t = await newTenant();
    const api = as(t.key);
    const structure = await api.post('/api/structures', { name: 's', code: { mcp: { url: remote.url } } });
    expect(structure.status, structure.text).to.equal(400);
    expect(structure.body.errors[0].path).to.equal('/body/code/mcp');
    const reserved = await api.post('/api/tools', {
      name: 'r',
      code: { mcp: { url: remote.url, headers: [{ name: 'Mcp-Session-Id', value: 'x' }] } },
    });
    expect(reserved.status, reserved.text).to.equal(400);
    const badUrl = await api.post('/api/tools', { name: 'r', code: { mcp: { url: 'ftp://example.com/mcp' } } });
    expect(badUrl.status, badUrl.text).to.equal(400);
    const missing = await api.post('/api/tools', {
      name: 'r',
      code: {
        mcp: {
          url: remote.url,
          headers: [{ name: 'Authorization', value: '00000000-0000-4000-8000-000000000000', source: 'secret_ref' }],
        },
      },
    });
    expect(missing.status, missing.text).to.equal(409);
    const tool = await api.post('/api/tools', { name: 'plain', code: { mcp: { url: remote.url } } });
    expect(tool.status, tool.text).to.equal(201);
    const toCode = await api.patch(`/api/tools/${tool.body.tool_id}`, { code: { default: {} } });
    expect(toCode.status, toCode.text).to.equal(409);
    const code = await api.post('/api/tools', { name: 'code' });
    const toMcp = await api.patch(`/api/tools/${code.body.tool_id}`, { code: { mcp: { url: remote.url } } });
    expect(toMcp.status, toMcp.text).to.equal(409);
  });

  it("the outbound policy refuses a server on the platform's own address: the deployment FAILED, an assistant run says why", async () => {
    const t = await newTenant();
    const api = as(t.key);
    const ownAddress = `${getStack().baseUrl}/mcp`;
    const tool = await api.post('/api/tools', { name: 'Inward', code: { mcp: { url: ownAddress } } });
    expect(tool.status, tool.text).to.equal(201);
    const deployment = await waitForDeployment(t.key, tool.body.latest_deployment_id);
    expect(deployment.status).to.equal('FAILED');
    expect(deployment.status_detail.reason).to.equal('AddressRefused');
    expect(deployment.status_detail.message).to.include('OUTBOUND_ALLOW');

    const assistant = await api.post('/api/assistants', { name: 'A', tool_ids: [tool.body.tool_id] });
    const created = await api.post(`/api/assistants/${assistant.body.assistant_id}/runs`, { input: 'hi' });
    const run = await waitForAssistantRun(t.key, created.body.assistant_run_id);
    expect(run.status).to.equal('FAILED');
    expect(run.status_detail.reason).to.equal('ToolUnavailable');
  });

  it("an assistant's model calls the server's tools: each call once, its result back to the model, a tool error too", async () => {
    const { modelProvider: provider } = getStack();
    const { t, api, tool } = await remoteTool('Team tools');
    const model = provider.uniqueModel();
    const assistant = await api.post('/api/assistants', { name: 'Mathy', tool_ids: [tool.tool_id] });
    provider.script(
      {
        model,
        toolCalls: [
          { id: 'call_add', name: 'Team_tools_add', arguments: '{"a": 2, "b": 3}' },
          { id: 'call_fail', name: 'Team_tools_fail', arguments: '{}' },
        ],
      },
      { model, respond: () => ({ text: 'The sum is 5' }) },
    );
    const before = remote.calls.length;
    const created = await api.post(`/api/assistants/${assistant.body.assistant_id}/runs`, {
      input: 'What is 2+3?',
      model: `local/${model}`,
    });
    expect(created.status, created.text).to.equal(201);
    const run = await waitForAssistantRun(t.key, created.body.assistant_run_id);
    expect(run.status, JSON.stringify(run.status_detail)).to.equal('SUCCEEDED');
    expect(run.output.value).to.equal('The sum is 5');

    const first = await provider.waitForRequest(model);
    const offered = first.body.tools.map((f: any) => f.function.name);
    expect(offered).to.include.members(['Team_tools_add', 'Team_tools_whoami', 'Team_tools_slow']);
    expect(first.body.tools.find((f: any) => f.function.name === 'Team_tools_add').function.description).to.equal(
      'Adds a and b.',
    );
    const second = await provider.waitForRequest(model, 2);
    const toolMessages: any[] = second.body.messages.filter((m: any) => m.role === 'tool');
    expect(toolMessages.find((m: any) => m.tool_call_id === 'call_add').content).to.equal('5');
    expect(toolMessages.find((m: any) => m.tool_call_id === 'call_fail').content).to.match(
      /^Error: the run ended FAILED: ToolError: the tool failed on purpose/,
    );
    const made = remote.calls.slice(before);
    expect(made.map((c) => c.name).sort()).to.deep.equal(['add', 'fail']);
    expect(made.find((c) => c.name === 'add')!.authorization).to.equal('Bearer s3cret');

    const events = (await api.get(`/api/assistant-runs/${created.body.assistant_run_id}/events?limit=1000`)).body
      .events;
    const started = events.find(
      (e: any) => e.type === 'AssistantToolCallStarted' && e.payload.tool_call_id === 'call_add',
    );
    expect(started.payload).to.include({ name: 'Team_tools_add', kind: 'tool', tool_id: tool.tool_id });
    const toolRun = await api.get(`/api/tool-runs/${started.payload.run_id}`);
    expect(toolRun.body).to.deep.include({ status: 'SUCCEEDED', input: { activity: 'add', params: { a: 2, b: 3 } } });
    expect(toolRun.body.limits ?? {}).to.not.have.property('memory_mb');
    const completed = events.filter((e: any) => e.type === 'AssistantToolCallCompleted');
    expect(completed.map((e: any) => [e.payload.tool_call_id, e.payload.status]).sort()).to.deep.equal([
      ['call_add', 'SUCCEEDED'],
      ['call_fail', 'FAILED'],
    ]);
  });

  it('cancelling an assistant run stops its call in flight: the run CANCELLED at once, the server sees the client go', async () => {
    const { modelProvider: provider } = getStack();
    const { api, tool } = await remoteTool('Sleepy');
    const model = provider.uniqueModel();
    const assistant = await api.post('/api/assistants', { name: 'Waits', tool_ids: [tool.tool_id] });
    provider.script({ model, toolCalls: [{ id: 'call_slow', name: 'Sleepy_slow', arguments: '{"seconds": 60}' }] });
    const cancelledBefore = remote.cancelled;
    const created = await api.post(`/api/assistants/${assistant.body.assistant_id}/runs`, {
      input: 'wait',
      model: `local/${model}`,
    });
    const runId = created.body.assistant_run_id;
    const deadline = Date.now() + 30_000;
    while (!remote.calls.some((c) => c.name === 'slow') && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    const cancelled = await api.post(`/api/assistant-runs/${runId}/cancel`);
    expect(cancelled.status, cancelled.text).to.equal(200);
    expect(cancelled.body.status).to.equal('CANCELLED');
    while (remote.cancelled === cancelledBefore && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(remote.cancelled).to.equal(cancelledBefore + 1);
  });
});
