// Approvals through HTTP on the real stack (docs/waitpoints.md): an assistant's model calls a tool that requires
// approval (the fake model's tool call); the run waits RUNNING with status_detail WaitingForApproval, holding no
// execution slot, behind a waitpoint that a member approves (with other arguments) or rejects, or its signed
// callback URL does; a second completion changes nothing; a cancel ends the run and its waitpoint; the wait's
// own timeout refuses the call; another organization and a viewer get nothing of it.
import { expect } from 'chai';
import { structureWithBuild } from '../harness/builds';
import { as } from '../harness/client';
import { memberWithRole } from '../harness/people';
import { CALCULATOR_TOOL, PY_PRELUDE, TERMINAL, waitForRun } from '../harness/runs';
import { getStack, newTenant, OUTSIDE_HOST } from '../harness/stack';
import http from 'node:http';
import { verifyChatapp } from '../../src/services/integrations/signatures';

async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const got = await probe();
    if (got) return got;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('waitpoints: approvals of tool calls', function () {
  this.timeout(180_000);

  /** A tenant, a calculator tool that requires approval, and an assistant with it; runs asked `10/4`. */
  async function approvalSetup(opts: { timeoutSeconds?: number; webhook?: (secretId: string) => object } = {}) {
    const { modelProvider: provider } = getStack();
    const t = await newTenant();
    const api = as(t.key);
    const tool = await structureWithBuild(t.organizationId, {
      kind: 'tool',
      files: { 'tool.py': CALCULATOR_TOOL },
      mainFile: 'tool.py',
      name: 'calc',
    });
    const secret = await api.post('/api/secrets', { name: 'approval-signing', value: 'signing secret' });
    const patched = await api.patch(`/api/tools/${tool.structureId}`, {
      requires_approval: true,
      ...(opts.timeoutSeconds ? { approval_timeout_seconds: opts.timeoutSeconds } : {}),
      ...(opts.webhook ? { approval_webhook: opts.webhook(secret.body.secret_id) } : {}),
    });
    expect(patched.status, patched.text).to.equal(200);
    expect(patched.body.requires_approval).to.equal(true);
    if (opts.webhook) expect(patched.body.approval_webhook).to.deep.include({ secret_id: secret.body.secret_id });
    const assistant = await api.post('/api/assistants', { name: 'Careful', tool_ids: [tool.structureId] });
    const model = provider.uniqueModel();
    provider.script(
      { model, toolCalls: [{ id: 'call_1', name: 'Calculator_divide', arguments: '{"a": 10, "b": 4}' }] },
      { model, respond: (body) => ({ text: `Result: ${body.messages.at(-1)!.content}` }) },
    );
    const created = await api.post(`/api/assistants/${assistant.body.assistant_id}/runs`, {
      input: 'What is 10/4?',
      model: `local/${model}`,
    });
    expect(created.status, created.text).to.equal(201);
    const runId: string = created.body.assistant_run_id;
    const waiting = await waitFor('the run waits for approval', async () => {
      const run = (await api.get(`/api/assistant-runs/${runId}`)).body;
      return run.status === 'RUNNING' && run.status_detail?.reason === 'WaitingForApproval' && run;
    });
    const [waitpoint] = (await api.get(`/api/waitpoints?status=WAITING&run_id=${runId}`)).body.waitpoints;
    return { t, api, tool, runId, waiting, waitpoint, model, provider };
  }

  const ended = (api: ReturnType<typeof as>, runId: string) =>
    waitFor('the run ends', async () => {
      const run = (await api.get(`/api/assistant-runs/${runId}`)).body;
      return TERMINAL.includes(run.status) && run;
    });

  it('waits holding no slot; an approval with other arguments runs the call with them; a second completion changes nothing', async () => {
    const { t, api, tool, runId, waiting, waitpoint, model, provider } = await approvalSetup();
    expect(waiting.status_detail.waitpoint_ids).to.deep.equal([waitpoint.waitpoint_id]);
    expect(waitpoint).to.deep.include({ kind: 'tool_approval', status: 'WAITING', run_id: runId, completion: null });
    expect(waitpoint.subject).to.deep.include({
      tool_id: tool.structureId,
      tool_name: 'calc',
      activity: 'divide',
      function_name: 'Calculator_divide',
      tool_call_id: 'call_1',
      arguments: { a: 10, b: 4 },
    });
    expect(waitpoint.callback_url).to.match(/\/api\/waitpoints\/[0-9a-f-]+\/callback\?expires=\d+&signature=/);
    // The slot goes back just after the run says it waits (the next step of its workflow).
    await waitFor('no execution slot is held while it waits', async () => {
      const slots = await getStack().ds.query(`SELECT state FROM execution_slots WHERE job_id = $1`, [runId]);
      return slots.length === 0;
    });
    expect(provider.requestsFor(model)).to.have.length(1);

    const done = await api.post(`/api/waitpoints/${waitpoint.waitpoint_id}/complete`, {
      approved: true,
      arguments: { a: 9, b: 3 },
      reason: 'use the corrected figures',
    });
    expect(done.status, done.text).to.equal(200);
    expect(done.body).to.deep.include({ status: 'COMPLETED', completed_by: t.userId });
    expect(done.body.completion).to.deep.equal({
      approved: true,
      arguments: { a: 9, b: 3 },
      reason: 'use the corrected figures',
    });
    const run = await ended(api, runId);
    expect(run.status, JSON.stringify(run.status_detail)).to.equal('SUCCEEDED');
    expect(run.output.value).to.equal('Result: 3.0');

    const again = await api.post(`/api/waitpoints/${waitpoint.waitpoint_id}/complete`, { approved: false });
    expect(again.status, again.text).to.equal(200);
    expect(again.body.completion.approved).to.equal(true);
    expect(again.body).to.not.have.property('callback_url');

    const events = (await api.get(`/api/assistant-runs/${runId}/events?limit=1000`)).body.events;
    const types = events.map((e: any) => e.type);
    const at = (type: string) => types.indexOf(type);
    expect(at('AssistantToolCallWaitingForApproval')).to.be.greaterThan(-1);
    expect(at('AssistantToolCallApproved')).to.be.greaterThan(at('AssistantToolCallWaitingForApproval'));
    expect(at('AssistantToolCallStarted')).to.be.greaterThan(at('AssistantToolCallApproved'));
    const started = events.find((e: any) => e.type === 'AssistantToolCallStarted');
    const toolRun = (await api.get(`/api/tool-runs/${started.payload.run_id}`)).body;
    expect(toolRun.input).to.deep.equal({ activity: 'divide', params: { a: 9, b: 3 } });
    const audit = (await api.get('/api/audit-events?page_size=100')).body.audit_events ?? [];
    expect(audit.some((a: any) => a.operation === 'CompleteWaitpoint')).to.equal(true);
  });

  it('a rejection through the callback URL tells the model why, and the run goes on; a forged URL is refused', async () => {
    const { api, runId, waitpoint, model, provider } = await approvalSetup();
    const url = new URL(waitpoint.callback_url);
    const forged = await fetch(`${url.origin}${url.pathname}?expires=${url.searchParams.get('expires')}&signature=x`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ approved: true }),
    });
    expect(forged.status).to.equal(403);
    const rejected = await fetch(waitpoint.callback_url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ approved: false, reason: 'not today' }),
    });
    expect(rejected.status).to.equal(200);
    expect(((await rejected.json()) as any).completed_by).to.equal('callback');
    const run = await ended(api, runId);
    expect(run.status).to.equal('SUCCEEDED');
    const second = await provider.waitForRequest(model, 2);
    expect(second.body.messages.at(-1)).to.deep.include({
      role: 'tool',
      tool_call_id: 'call_1',
      content: 'Error: The call of Calculator_divide was rejected by callback: not today',
    });
    const events = (await api.get(`/api/assistant-runs/${runId}/events?limit=1000`)).body.events;
    expect(events.some((e: any) => e.type === 'AssistantToolCallStarted')).to.equal(false);
    expect(events.find((e: any) => e.type === 'AssistantToolCallRejected').payload).to.deep.include({
      reason: 'not today',
      completed_by: 'callback',
    });
  });

  it('cancelling a waiting run ends it CANCELLED at once, and its waitpoint CANCELLED: completing it is a 409', async () => {
    const { api, runId, waitpoint } = await approvalSetup();
    const cancelled = await api.post(`/api/assistant-runs/${runId}/cancel`);
    expect(cancelled.status, cancelled.text).to.equal(200);
    expect(cancelled.body.status).to.equal('CANCELLED');
    const after = (await api.get(`/api/waitpoints/${waitpoint.waitpoint_id}`)).body;
    expect(after.status).to.equal('CANCELLED');
    const late = await api.post(`/api/waitpoints/${waitpoint.waitpoint_id}/complete`, { approved: true });
    expect(late.status, late.text).to.equal(409);
    expect(late.body.type).to.equal('ConflictError');
  });

  it("past the tool's approval timeout the call is refused (TIMED_OUT) and the run goes on", async () => {
    const { api, runId, waitpoint, model, provider } = await approvalSetup({ timeoutSeconds: 1 });
    expect(waitpoint.timeout_seconds).to.equal(1);
    const run = await ended(api, runId);
    expect(run.status).to.equal('SUCCEEDED');
    expect((await api.get(`/api/waitpoints/${waitpoint.waitpoint_id}`)).body.status).to.equal('TIMED_OUT');
    const second = await provider.waitForRequest(model, 2);
    expect(second.body.messages.at(-1)!.content).to.equal(
      'Error: The call of Calculator_divide was not approved within 1 s',
    );
  });

  it('another organization sees nothing of it; a viewer reads it without its callback URL and cannot complete it', async () => {
    const { t, api, runId, waitpoint } = await approvalSetup();
    const stranger = await newTenant();
    expect((await as(stranger.key).get(`/api/waitpoints/${waitpoint.waitpoint_id}`)).status).to.equal(404);
    expect((await as(stranger.key).get('/api/waitpoints')).body.waitpoints).to.deep.equal([]);
    const foreign = await as(stranger.key).post(`/api/waitpoints/${waitpoint.waitpoint_id}/complete`, {
      approved: true,
    });
    expect(foreign.status).to.equal(404);
    const viewer = await memberWithRole(t.organizationId, 'viewer');
    const seen = await as(viewer.key).get(`/api/waitpoints/${waitpoint.waitpoint_id}`);
    expect(seen.status).to.equal(200);
    expect(seen.body).to.not.have.property('callback_url');
    expect(
      (await as(viewer.key).post(`/api/waitpoints/${waitpoint.waitpoint_id}/complete`, { approved: true })).status,
    ).to.equal(403);
    const bad = await api.post(`/api/waitpoints/${waitpoint.waitpoint_id}/complete`, { approved: 'yes' });
    expect(bad.status).to.equal(400);
    await api.post(`/api/assistant-runs/${runId}/cancel`);
  });

  it("posts a waiting call to the tool's approval webhook, signed, and the chat app's answer through the callback URL runs it", async () => {
    const posts: Array<{ headers: http.IncomingHttpHeaders; body: string }> = [];
    const receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        posts.push({ headers: req.headers, body });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, OUTSIDE_HOST, r));
    try {
      const url = `http://${OUTSIDE_HOST}:${(receiver.address() as { port: number }).port}/approvals`;
      const { api, runId, waitpoint } = await approvalSetup({ webhook: (secret_id) => ({ url, secret_id }) });
      const post = await waitFor('the webhook gets the post', async () => posts[0]);
      const headers = {
        signature: post.headers['x-tarmac-signature'] as string,
        timestamp: post.headers['x-tarmac-request-timestamp'] as string,
      };
      expect(verifyChatapp('signing secret', headers, Buffer.from(post.body))).to.equal('ok');
      expect(verifyChatapp('another secret', headers, Buffer.from(post.body))).to.equal('bad_signature');
      expect(post.headers['x-tarmac-waitpoint-id']).to.equal(waitpoint.waitpoint_id);
      const sent = JSON.parse(post.body);
      expect(sent).to.deep.include({ type: 'waitpoint.waiting' });
      expect(sent.waitpoint).to.deep.include({ waitpoint_id: waitpoint.waitpoint_id, run_id: runId });
      expect(sent.waitpoint.subject.function_name).to.equal('Calculator_divide');
      // The chat app's button: the callback URL, no API key.
      const answered = await fetch(sent.callback_url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ approved: true }),
      });
      expect(answered.status).to.equal(200);
      const run = await ended(api, runId);
      expect(run.status).to.equal('SUCCEEDED');
      expect(run.output.value).to.equal('Result: 2.5');
      const events = (await api.get(`/api/assistant-runs/${runId}/events?limit=1000`)).body.events;
      expect(events.find((e: any) => e.type === 'WaitpointNotified').payload).to.deep.include({ url, status: 204 });
    } finally {
      receiver.close();
    }
  });

  it('an approval webhook on a refused address is never posted to; the run records why and waits all the same', async () => {
    const refused = `${getStack().baseUrl}/api/approvals`;
    const { api, runId, waitpoint } = await approvalSetup({ webhook: (secret_id) => ({ url: refused, secret_id }) });
    const failed = await waitFor(
      'the run records the failed notification',
      async () =>
        (await api.get(`/api/assistant-runs/${runId}/events?limit=1000`)).body.events.find(
          (e: any) => e.type === 'WaitpointNotificationFailed',
        ),
      90_000,
    );
    expect(failed.payload.error).to.include('OUTBOUND_ALLOW');
    expect((await api.get(`/api/waitpoints/${waitpoint.waitpoint_id}`)).body.status).to.equal('WAITING');
    await api.post(`/api/assistant-runs/${runId}/cancel`);
  });

  describe('tokens for code', () => {
    /** Makes a token (twice, by its key), then polls it with wait_seconds until it no longer waits. */
    const WAITER = `${PY_PRELUDE}
def api(method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(BASE + "/" + path, data=data, method=method,
                                 headers={"Authorization": "Bearer " + KEY, "Content-Type": "application/json"})
    with urllib.request.urlopen(req) as r:
        return r.status, json.loads(r.read() or b"null")
status, w = api("POST", "api/waitpoints", {"timeout_seconds": int(sys.argv[1]), "idempotency_key": "k1", "description": "Ship it?"})
again, same = api("POST", "api/waitpoints", {"timeout_seconds": int(sys.argv[1]), "idempotency_key": "k1"})
print("made " + json.dumps([status, again, same["waitpoint_id"] == w["waitpoint_id"], "callback_url" in w]))
while w["status"] == "WAITING":
    _, w = api("GET", "api/waitpoints/" + w["waitpoint_id"] + "?wait_seconds=5")
print("ended " + json.dumps({"status": w["status"], "completion": w["completion"]}))
`;

    async function waitingToken(timeoutSeconds: number) {
      const t = await newTenant();
      const api = as(t.key);
      const structure = await structureWithBuild(t.organizationId, {
        files: { 'structure.py': WAITER },
        name: 'Waiter',
      });
      const created = await api.post(`/api/structures/${structure.structureId}/runs`, {
        args: [String(timeoutSeconds)],
      });
      expect(created.status, created.text).to.equal(201);
      const runId = created.body.structure_run_id;
      const token = await waitFor('the run makes its token', async () => {
        const [w] = (await api.get(`/api/waitpoints?run_id=${runId}`)).body.waitpoints;
        return w;
      });
      return { t, api, runId, token };
    }

    const endedLine = async (api: ReturnType<typeof as>, runId: string) => {
      const logs: string[] = (await api.get(`/api/structure-runs/${runId}/logs`)).body.logs;
      return {
        made: JSON.parse(logs.find((l) => l.startsWith('made '))!.slice(5)),
        ended: JSON.parse(logs.find((l) => l.startsWith('ended '))!.slice(6)),
      };
    };

    it("a run's code makes a token once per key and gets the output it is completed with", async () => {
      const { t, api, runId, token } = await waitingToken(600);
      expect(token).to.deep.include({ kind: 'token', status: 'WAITING', timeout_seconds: 600 });
      expect(token.subject).to.deep.equal({ description: 'Ship it?' });
      const done = await api.post(`/api/waitpoints/${token.waitpoint_id}/complete`, {
        approved: true,
        output: { ship: 'yes' },
      });
      expect(done.status, done.text).to.equal(200);
      expect(done.body).to.deep.include({ status: 'COMPLETED', completed_by: t.userId });
      const run = await waitForRun(t.key, runId, undefined, 60_000);
      expect(run.status).to.equal('SUCCEEDED');
      const { made, ended } = await endedLine(api, runId);
      expect(made).to.deep.equal([201, 200, true, true]);
      expect(ended).to.deep.equal({ status: 'COMPLETED', completion: { approved: true, output: { ship: 'yes' } } });
      const again = await api.post(`/api/waitpoints/${token.waitpoint_id}/complete`, { approved: false });
      expect(again.body.completion).to.deep.equal({ approved: true, output: { ship: 'yes' } });
    });

    it('a token no one completes in time is TIMED_OUT, which its code reads', async () => {
      const { t, api, runId } = await waitingToken(1);
      const run = await waitForRun(t.key, runId, undefined, 60_000);
      expect(run.status).to.equal('SUCCEEDED');
      const { ended } = await endedLine(api, runId);
      expect(ended).to.deep.equal({
        status: 'TIMED_OUT',
        completion: { approved: false, reason: 'No one completed it within 1 s' },
      });
    });

    it("only a run's own credential makes one (an API key of a person gets a 403)", async () => {
      const t = await newTenant();
      const refused = await as(t.key).post('/api/waitpoints', { timeout_seconds: 10 });
      expect(refused.status, refused.text).to.equal(403);
    });
  });
});
