// The MCP server at /mcp (docs/mcp.md) driven by the official TypeScript SDK's client over Streamable HTTP (and
// the Python SDK's, test/api/mcp/python_client.py): the
// organization's structures, functions and knowledge bases listed as tools, called (a structure run with its
// progress, and one cancelled by the client; a function; a knowledge base query), the list announced when it
// changes, another organization seeing none of it, and the errors: no key, an unknown tool, bad arguments, a
// viewer's call, a failed run, a deleted key that ends the session.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { as } from '../harness/client';
import { structureWithBuild } from '../harness/builds';
import { runKnowledgeBaseJob, uploadText } from '../harness/knowledge-bases';
import { memberWithRole } from '../harness/people';
import { CALCULATOR_TOOL, PY_PRELUDE, waitForRun } from '../harness/runs';
import { pythonVenv } from '../harness/python-venv';
import { getStack, newTenant } from '../harness/stack';

const execFileAsync = promisify(execFile);
/** The Python SDK's client, pinned (from PyPI, into a venv cached outside the repository). */
const PYTHON_MCP = 'mcp==2.3.0';
const PYTHON_CLIENT = path.resolve(__dirname, '../../../test/api/mcp/python_client.py');

const SHOUT = `${PY_PRELUDE}
call("POST", "api/structure-runs/" + RUN_ID + "/events", {"type": "StartStructureRunEvent", "timestamp": time.time(), "payload": {}})
if sys.argv[1:] == ["slowly"]:
    time.sleep(60)
out = {"type": "TextArtifact", "value": " ".join(sys.argv[1:]).upper()}
assert call("POST", "api/structure-runs/" + RUN_ID + "/events", {"type": "FinishStructureRunEvent", "timestamp": time.time(), "payload": {"output_task_output": out}}) == 202
`;

async function connect(key: string | undefined) {
  const client = new Client({ name: 'tarmac-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${getStack().baseUrl}/mcp`), {
    requestInit: key ? { headers: { Authorization: `Bearer ${key}` } } : {},
  });
  await client.connect(transport);
  return client;
}

const textOf = (result: any) => (result.content as Array<{ type: string; text: string }>)[0].text;

describe('MCP server', function () {
  this.timeout(180_000);
  let tenant: Awaited<ReturnType<typeof newTenant>>;
  let client: Client;
  let names: Record<string, string>;

  before(async () => {
    tenant = await newTenant('mcp');
    const api = as(tenant.key);
    await structureWithBuild(tenant.organizationId, { files: { 'structure.py': SHOUT }, name: 'Shout it' });
    await structureWithBuild(tenant.organizationId, {
      kind: 'function',
      files: { 'main.py': 'def handler(event):\n    return {"doubled": event["body"]["n"] * 2}\n' },
      mainFile: 'main.py',
      name: 'Double',
    });
    await structureWithBuild(tenant.organizationId, {
      kind: 'tool',
      files: { 'tool.py': CALCULATOR_TOOL },
      mainFile: 'tool.py',
      name: 'Calc',
    });
    const bucketId = (await api.post('/api/buckets', { name: 'mcp-docs' })).body.bucket_id;
    await uploadText(api, bucketId, 'capitals.txt', 'The capital of Freedonia is Fredville.');
    const kb = await api.post('/api/knowledge-bases', {
      name: 'Capitals',
      description: 'Where each country governs from.',
      type: 'gtc_hybrid_sql_pg_vector',
      config: { gtc_hybrid_sql_pg_vector: { use_default_embedding_model: false } },
      asset_paths: [`${bucketId}/capitals.txt`],
    });
    expect(kb.status, kb.text).to.equal(201);
    await runKnowledgeBaseJob(api, kb.body.knowledge_base_id);
    client = await connect(tenant.key);
    const listed = await client.listTools();
    names = Object.fromEntries(listed.tools.map((t) => [t.name.split('.')[0] + ':' + t.name.split('.')[1], t.name]));
  });
  after(async () => {
    await client?.close();
  });

  it('lists the organization’s structures, functions and knowledge bases, with stable names and schemas', async () => {
    // A tool's activities come once it is described (below).
    const tools = (await client.listTools()).tools.filter((t) => !t.name.startsWith('run_tool_activity.'));
    expect(tools.map((t) => t.name.replace(/\.[0-9a-f]{8}$/, ''))).to.deep.equal([
      'run_structure.shout-it',
      'execute_function.double',
      'query_knowledge_base.capitals',
      'search_knowledge_base.capitals',
    ]);
    const kb = tools.find((t) => t.name.startsWith('query_knowledge_base.'))!;
    expect(kb.description).to.include('Where each country governs from.');
    expect(kb.inputSchema).to.include({ type: 'object' });
    expect((kb.inputSchema as any).required).to.deep.equal(['query']);
    expect((await client.listTools()).tools.map((t) => t.name)).to.include.members(tools.map((t) => t.name));
  });

  it("lists a tool's activities once it is described (a listing starts it), and runs one as a tool run", async () => {
    let divide: { name: string; description?: string } | undefined;
    for (let i = 0; i < 120 && !divide; i++) {
      divide = (await client.listTools()).tools.find((t) => t.name.startsWith('run_tool_activity.calc-divide.'));
      if (!divide) await new Promise((r) => setTimeout(r, 500));
    }
    expect(divide, 'the activity is listed').to.not.equal(undefined);
    expect(divide!.description).to.equal('Divides a by b. (of the tool "Calc")');
    const result = await client.callTool({ name: divide!.name, arguments: { a: 10, b: 4 } });
    expect(result.isError, textOf(result)).to.not.equal(true);
    expect(JSON.parse(textOf(result))).to.deep.equal({ type: 'TextArtifact', value: '2.5' });
  });

  it('runs a structure, with its events as progress, and answers its output; the run is like any other', async () => {
    const progress: string[] = [];
    const result = await client.callTool(
      { name: names['run_structure:shout-it'], arguments: { args: ['hello', 'there'] } },
      undefined,
      { onprogress: (p) => void progress.push(p.message ?? ''), timeout: 120_000 },
    );
    expect(result.isError, textOf(result)).to.not.equal(true);
    const answer = JSON.parse(textOf(result));
    expect(answer.output).to.include({ value: 'HELLO THERE' });
    expect(progress.some((m) => m.startsWith('StartStructureRunEvent'))).to.equal(true);
    const run = await as(tenant.key).get(`/api/structure-runs/${answer.structure_run_id}`);
    expect(run.body.status).to.equal('SUCCEEDED');
  });

  it('cancels the run when the client cancels the call', async () => {
    const abort = new AbortController();
    const call = client.callTool(
      { name: names['run_structure:shout-it'], arguments: { args: ['slowly'] } },
      undefined,
      {
        signal: abort.signal,
        timeout: 120_000,
      },
    );
    const runs = async () =>
      (await as(tenant.key).get('/api/runs?kind=structure&status=RUNNING')).body.runs as Array<{ run_id: string }>;
    let running: Array<{ run_id: string }> = [];
    for (let i = 0; i < 200 && !running.length; i++) {
      running = await runs();
      if (!running.length) await new Promise((r) => setTimeout(r, 100));
    }
    expect(running).to.have.length(1);
    abort.abort();
    await call.catch(() => undefined); // the client gives up on its own side
    const ended = await waitForRun(tenant.key, running[0].run_id, (r) => r.status === 'CANCELLED', 30_000);
    expect(ended.status).to.equal('CANCELLED');
  });

  it('executes a function and queries a knowledge base', async () => {
    const doubled = await client.callTool({ name: names['execute_function:double'], arguments: { body: { n: 21 } } });
    expect(JSON.parse(textOf(doubled))).to.deep.equal({ doubled: 42 });
    const found = await client.callTool({
      name: names['query_knowledge_base:capitals'],
      arguments: { query: 'Freedonia capital', count: 3 },
    });
    expect(found.isError, textOf(found)).to.not.equal(true);
    expect(textOf(found)).to.include('Fredville');
  });

  it('answers tool errors with a reason: unknown tool, bad arguments, a failed run, a viewer', async () => {
    const unknown = await client.callTool({ name: 'run_structure.nothing.00000000', arguments: {} });
    expect(unknown.isError).to.equal(true);
    expect(textOf(unknown)).to.match(/^Unknown tool run_structure\.nothing\.00000000/);
    const bad = await client.callTool({ name: names['query_knowledge_base:capitals'], arguments: { query: 7 } });
    expect(bad.isError).to.equal(true);
    expect(textOf(bad)).to.match(
      /^Bad arguments for query_knowledge_base\.capitals\.[0-9a-f]{8}: \/query must be string/,
    );
    const failed = await client.callTool({ name: names['execute_function:double'], arguments: { body: {} } });
    expect(failed.isError).to.equal(true);
    expect(textOf(failed)).to.match(/^Function run [0-9a-f-]{36} ended FAILED/);

    const viewer = await connect((await memberWithRole(tenant.organizationId, 'viewer')).key);
    try {
      expect((await viewer.listTools()).tools.map((t) => t.name)).to.include.members(Object.values(names)); // a viewer reads the list
      const refused = await viewer.callTool({ name: names['execute_function:double'], arguments: { body: { n: 1 } } });
      expect(refused.isError).to.equal(true);
      expect(textOf(refused)).to.match(/needs the member role or above; this credential acts as viewer/);
    } finally {
      await viewer.close();
    }
  });

  it('announces a changed list; another organization sees none of these tools', async () => {
    const changed = new Promise<void>((resolve) =>
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()),
    );
    await client.listTools();
    await structureWithBuild(tenant.organizationId, { files: { 'structure.py': SHOUT }, name: 'Whisper' });
    await Promise.race([
      changed,
      new Promise((_, reject) => setTimeout(() => reject(new Error('no list_changed')), 20_000)),
    ]);
    expect((await client.listTools()).tools.map((t) => t.name)).to.include.members(Object.values(names));

    const stranger = await connect((await newTenant('mcp-stranger')).key);
    try {
      expect((await stranger.listTools()).tools).to.deep.equal([]);
      const foreign = await stranger.callTool({
        name: names['execute_function:double'],
        arguments: { body: { n: 1 } },
      });
      expect(foreign.isError).to.equal(true);
      expect(textOf(foreign)).to.match(/^Unknown tool/);
    } finally {
      await stranger.close();
    }
  });

  it("works with the Python mcp package's client too", async () => {
    const python = await pythonVenv('mcp-client', [PYTHON_MCP]);
    const { stdout } = await execFileAsync(python, [PYTHON_CLIENT, names['execute_function:double']], {
      env: { ...process.env, MCP_URL: `${getStack().baseUrl}/mcp`, MCP_API_KEY: tenant.key },
      timeout: 60_000,
    });
    const got = JSON.parse(stdout.trim().split('\n').pop()!);
    expect(got.tools).to.include.members(Object.values(names));
    expect(got.doubled).to.deep.equal({ is_error: false, text: JSON.stringify({ doubled: 42 }) });
    expect(got.unknown.is_error).to.equal(true);
    expect(got.unknown.text).to.match(/^Unknown tool execute_function\.nothing\.00000000/);
  });

  it('refuses a request without a key (401), and ends the session of a deleted key', async () => {
    const res = await fetch(`${getStack().baseUrl}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).to.equal(401);

    const person = await memberWithRole(tenant.organizationId, 'member');
    const doomed = await connect(person.key);
    expect((await doomed.listTools()).tools.length).to.be.greaterThan(0);
    const keys = await as(tenant.key).get(`/api/users/${person.userId}/api-keys`);
    expect((await as(tenant.key).delete(`/api/api-keys/${keys.body.api_keys[0].api_key_id}`)).status).to.equal(204);
    let refused: unknown;
    await doomed.listTools().catch((err: unknown) => (refused = err));
    expect((refused as { code?: number }).code).to.equal(401);
    expect(String(refused)).to.include('The API key is unknown, inactive or deleted');
    await doomed.close();
  });

  it("a retried call with the same idempotency key gets the first call's run; other arguments under it are refused", async () => {
    const runsOf = async () =>
      (await as(tenant.key).get(`/api/functions/${await functionId()}/runs?page_size=100`)).body.pagination.total_count;
    const functionId = async () =>
      (await as(tenant.key).get('/api/functions')).body.functions.find((f: any) => f.name === 'Double').function_id;
    const before = await runsOf();
    const once = {
      name: names['execute_function:double'],
      arguments: { body: { n: 5 } },
      _meta: { idempotency_key: 'mcp-retry-1' },
    };
    const first = await client.callTool(once);
    const again = await client.callTool(once);
    expect(JSON.parse(textOf(first))).to.deep.equal({ doubled: 10 });
    expect(JSON.parse(textOf(again))).to.deep.equal({ doubled: 10 });
    expect(await runsOf()).to.equal(before + 1);
    const other = await client.callTool({ ...once, arguments: { body: { n: 6 } } });
    expect(other.isError).to.equal(true);
    expect(textOf(other)).to.match(/^IdempotencyKeyReusedError: /);

    const shout = {
      name: names['run_structure:shout-it'],
      arguments: { args: ['once'] },
      _meta: { idempotency_key: 'mcp-retry-2' },
    };
    const [a, b] = await Promise.all([client.callTool(shout), client.callTool(shout)]);
    expect(JSON.parse(textOf(a)).structure_run_id).to.equal(JSON.parse(textOf(b)).structure_run_id);
  });

  it("a run's own credential lists and calls the knowledge tools only, as on the REST routes", async () => {
    const lister = `${PY_PRELUDE}
def rpc(body, session=None):
    headers = {"Authorization": "Bearer " + KEY, "Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if session:
        headers["Mcp-Session-Id"] = session
    req = urllib.request.Request(BASE + "/mcp", data=json.dumps(body).encode(), method="POST", headers=headers)
    with urllib.request.urlopen(req) as r:
        text, sid = r.read().decode(), r.headers.get("mcp-session-id")
    data = [line[6:] for line in text.splitlines() if line.startswith("data: ")]
    return (json.loads(data[-1]) if data else json.loads(text) if text.strip() else None), sid
_, sid = rpc({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "run", "version": "1"}}})
rpc({"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)
listed, _ = rpc({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, sid)
print("tools " + json.dumps(sorted(t["name"] for t in listed["result"]["tools"])))
called, _ = rpc({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": sys.argv[1], "arguments": {"body": {"n": 1}}}}, sid)
print("call " + json.dumps(called["result"]))
`;
    const structure = await structureWithBuild(tenant.organizationId, {
      files: { 'structure.py': lister },
      name: 'Lister',
    });
    const created = await as(tenant.key).post(`/api/structures/${structure.structureId}/runs`, {
      args: [names['execute_function:double']],
    });
    expect(created.status, created.text).to.equal(201);
    const run = await waitForRun(tenant.key, created.body.structure_run_id);
    const logs: string[] = (await as(tenant.key).get(`/api/structure-runs/${run.structure_run_id}/logs`)).body.logs;
    expect(run.status, logs.join('\n')).to.equal('SUCCEEDED');
    const tools: string[] = JSON.parse(logs.find((l) => l.startsWith('tools '))!.slice(6));
    expect(tools.length).to.be.greaterThan(0);
    expect(
      tools.every((n) => /^(query_knowledge_base|search_knowledge_base|query_retriever)\./.test(n)),
      tools.join(),
    ).to.equal(true);
    const called = JSON.parse(logs.find((l) => l.startsWith('call '))!.slice(5));
    expect(called.isError).to.equal(true);
    expect(called.content[0].text).to.match(/^Unknown tool execute_function\./);
  });
});
