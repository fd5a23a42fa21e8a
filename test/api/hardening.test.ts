// What a careless or hostile client may send, answered as the OpenAPI document says (issue 18): bounded
// numeric query parameters, the input guard (depth, NUL, unpaired surrogates) before any recursive walk,
// 405 with Allow for undeclared methods, SSE frames that match their declared schema, signed URL expiries.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { expect } from 'chai';
import { allRoutes, koaPath } from '../../src/api/http/route';
import { MAX_PAGE } from '../../src/persistence/pagination';
import { MAX_JSON_DEPTH } from '../../src/api/schemas/registry';
import { presignAssetUrl } from '../../src/services/storage/buckets';
import { structureWithBuild } from '../harness/builds';
import { as, request } from '../harness/client';
import { ECHO_PROGRAM, waitForRun } from '../harness/runs';
import { readSse, SseRead } from '../harness/sse';
import { getStack, newTenant } from '../harness/stack';

/** A path of the route with every parameter a fresh uuid (or a plain asset name). */
const pathOf = (path: string) =>
  `/api${path.replace(/\{(\w+)\}/g, (_, name) => (name === 'name' || name === 'activity_name' ? 'a.txt' : randomUUID()))}`;

/** `depth` nested objects: `{a: {a: ... {} }}`. */
function nested(depth: number): unknown {
  let value: unknown = {};
  for (let i = 1; i < depth; i++) value = { a: value };
  return value;
}

/** A request with any method (fetch refuses TRACE). */
function send(method: string, path: string, key?: string): Promise<{ status: number; allow?: string; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${getStack().baseUrl}${path}`,
      { method, headers: key ? { authorization: `Bearer ${key}` } : {} },
      (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () =>
          resolve({ status: res.statusCode!, allow: res.headers.allow, body: text ? JSON.parse(text) : undefined }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

async function documentAjv() {
  const doc = (await request('GET', '/api/openapi.json')).body;
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ $id: 'openapi', components: doc.components });
  const compile = (schema: unknown) =>
    ajv.compile(JSON.parse(JSON.stringify(schema).replace(/"#\/components\//g, '"openapi#/components/')));
  return { doc, compile };
}

/**
 * Checks each frame against the declared event schema of `text/event-stream` (as schemathesis parses SSE: `event`
 * defaults to `message`, the last `id` persists), and its `data` against the `contentSchema` of its kind; a
 * resumable stream's end frame (`event: end`, read with `?end_event=true`) too (`endFrame`: an open-ended stream
 * has ids but no end frame).
 */
async function expectFramesMatchDocument(
  path: string,
  method: string,
  status: string,
  read: Pick<SseRead, 'frames' | 'endEvent'>,
  withId: boolean,
  endFrame = withId,
) {
  const { doc, compile } = await documentAjv();
  const eventSchema = doc.paths[path][method].responses[status].content['text/event-stream'].schema;
  const validateEvent = compile(eventSchema);
  const kinds: any[] = eventSchema.oneOf ?? [eventSchema];
  const dataOf = (kind: string) =>
    compile(kinds.find((k) => k.properties.event.enum.includes(kind)).properties.data.contentSchema);
  const check = (event: Record<string, string>, data: unknown, validateData: ReturnType<typeof compile>) => {
    expect(validateEvent(event), `${JSON.stringify(event)}: ${JSON.stringify(validateEvent.errors)}`).to.equal(true);
    expect(validateData(data), `${JSON.stringify(data)}: ${JSON.stringify(validateData.errors)}`).to.equal(true);
  };
  expect(read.frames.length).to.be.greaterThan(0);
  const validateMessage = dataOf('message');
  for (const frame of read.frames) {
    check(
      { data: JSON.stringify(frame.data), event: 'message', ...(withId ? { id: String(frame.id) } : {}) },
      frame.data,
      validateMessage,
    );
  }
  if (!endFrame) return;
  expect(read.endEvent, 'the end frame').to.not.equal(undefined);
  const lastId = String(read.frames[read.frames.length - 1].id);
  check({ data: JSON.stringify(read.endEvent), event: 'end', id: lastId }, read.endEvent, dataOf('end'));
}

describe('hardening: the document is true for careless and hostile input', function () {
  this.timeout(120_000);

  it('bounds every numeric query parameter in the document, and checks page before any SQL on every paginated list', async () => {
    const { doc } = await documentAjv();
    for (const [path, methods] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(methods)) {
        for (const p of op.parameters.filter(
          (x: any) => x.in === 'query' && ['integer', 'number'].includes(x.schema.type),
        )) {
          expect(p.schema, `${method} ${path} ?${p.name}`).to.include.keys('minimum', 'maximum');
        }
      }
    }
    const t = await newTenant();
    const api = as(t.key);
    const paged = allRoutes().filter((r) => r.paged && r.method === 'get');
    expect(paged.length).to.be.greaterThan(15);
    for (const r of paged) {
      const path = pathOf(r.path);
      for (const page of ['7643178755367697857380352', String(MAX_PAGE + 1), '1e3', '0x10', 'Infinity', ' 2']) {
        const res = await api.get(`${path}?page=${encodeURIComponent(page)}`);
        expect(res.status, `${r.operationId} page=${page}: ${res.text}`).to.equal(400);
        expect(res.body.errors[0].path).to.equal('/query/page');
      }
      const last = await api.get(
        `${path}?page=${MAX_PAGE}&page_size=${r.pageSize?.max ?? getStack().config.pageSizeMax}`,
      );
      expect(last.status, `${r.operationId} ${koaPath(r)}: ${last.text}`).to.be.oneOf([200, 404]);
    }
    // A new organization has one bucket (its default bucket): page MAX_PAGE is empty, and no SQL error.
    const list = await api.get(`/api/buckets?page=${MAX_PAGE}`);
    expect(list.body).to.deep.include({ buckets: [] });
    expect(list.body.pagination).to.deep.include({
      page_number: MAX_PAGE,
      total_count: 1,
      previous_page: MAX_PAGE - 1,
    });
    expect((await api.get(`/api/structure-runs/${randomUUID()}/events?offset=1000000001`)).status).to.equal(400);
    expect(
      (await api.get(`/api/structure-runs/${randomUUID()}/events/stream?last_event_id=1000000000000000`)).status,
    ).to.equal(400);
  });

  it(`refuses JSON nested deeper than ${MAX_JSON_DEPTH} levels with a 400 naming the place, before anything walks it`, async () => {
    const t = await newTenant();
    const api = as(t.key);
    // The body is level 1, metadata level 2: MAX_JSON_DEPTH - 1 more levels fit.
    const fits = await api.post('/api/rules', { name: 'deep', rule: 'r', metadata: nested(MAX_JSON_DEPTH - 1) });
    expect(fits.status, fits.text).to.equal(201);
    const over = await api.post('/api/rules', { name: 'deep', rule: 'r', metadata: nested(MAX_JSON_DEPTH) });
    expect(over.status).to.equal(400);
    expect(over.body.type).to.equal('ValidationError');
    expect(over.body.errors[0].path).to.equal(`/body/metadata${'/a'.repeat(MAX_JSON_DEPTH - 1)}`);
    // 100,000 levels: about 600 KB, under the body limit; stack overflows were the 500s of every recursive walk.
    const raw = `{"name":"x","messages":[],"metadata":${'{"a":'.repeat(100_000)}{}${'}'.repeat(100_000)}}`;
    for (const path of ['/api/rules', '/api/threads', '/api/structure-runs/' + randomUUID() + '/events']) {
      const res = await api.post(path, undefined, { raw, headers: { 'content-type': 'application/json' } });
      expect(res.status, `${path}: ${res.text.slice(0, 200)}`).to.equal(400);
      expect(res.body.errors[0].message).to.contain(`nested deeper than ${MAX_JSON_DEPTH}`);
    }
    // Arrays count as levels too, also in members the schema does not know (they are ignored, not stored).
    const arrays = await api.post('/api/buckets', {
      name: 'b',
      extra: JSON.parse(`${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`),
    });
    expect(arrays.status).to.equal(400);
    expect(arrays.body.errors[0].path).to.match(/^\/body\/extra(\/0)+$/);
  });

  it('refuses NUL characters and unpaired surrogates anywhere in a request with a 400 naming the field, as the schemas say', async () => {
    const t = await newTenant();
    const api = as(t.key);
    const thread = (await api.post('/api/threads', { name: 't' })).body.thread_id;
    const cases: Array<[string, string, unknown, string]> = [
      ['post', '/api/buckets', { name: 'a\u0000b' }, '/body/name'],
      ['post', '/api/assistants', { name: 'a', description: 'x\u0000' }, '/body/description'],
      ['post', '/api/rules', { name: 'r', rule: 'r', metadata: { k: ['ok', 'n\u0000'] } }, '/body/metadata/k/1'],
      ['post', '/api/rules', { name: 'r', rule: 'r', metadata: { 'k\u0000': 1 } }, '/body/metadata'],
      [
        'post',
        '/api/threads',
        { name: 't', messages: [{ input: 'i', output: 'o', unknown: '\u0000' }] },
        '/body/messages/0/unknown',
      ],
      ['post', `/api/threads/${thread}/messages`, { input: 'half \ud800 a pair', output: 'o' }, '/body/input'],
      ['post', `/api/threads/${thread}/messages`, { input: 'i', output: '\udfff' }, '/body/output'],
      [
        'post',
        '/api/tools',
        { name: 't', code: { codehost: { owner: 'o', name: 'n', push: { branch: 'b\u0000' } } } },
        '/body/code/codehost/push/branch',
      ],
      [
        'post',
        `/api/structure-runs/${randomUUID()}/events`,
        { timestamp: 1, payload: { a: '\u0000' } },
        '/body/payload/a',
      ],
      ['get', '/api/rulesets?alias=%00', undefined, '/query/alias'],
      ['get', `/api/buckets/${randomUUID()}/assets/a%00b`, undefined, '/path/name'],
    ];
    for (const [method, path, body, where] of cases) {
      const res = method === 'get' ? await api.get(path) : await api.post(path, body);
      expect(res.status, `${path} ${JSON.stringify(body)}: ${res.text}`).to.equal(400);
      expect(res.body.type).to.equal('ValidationError');
      expect(res.body.errors[0].path, res.text).to.equal(where);
      expect(res.body.errors[0].message).to.match(/NUL character|unpaired UTF-16 surrogate/);
    }
    // A pair is a character like any other.
    const emoji = await api.post(`/api/threads/${thread}/messages`, {
      input: 'ok \ud83d\ude00',
      output: 'o',
      metadata: { '\ud83d\ude00': '\ud83d\ude00' },
    });
    expect(emoji.status, emoji.text).to.equal(201);

    // The document says so: strings, member names and open values refuse NUL.
    const { doc, compile } = await documentAjv();
    const createRule = compile(doc.components.schemas.CreateRuleRequest);
    expect(createRule({ name: 'r', rule: 'r', metadata: { deep: [{ x: 'fine' }] } })).to.equal(true);
    for (const bad of [
      { name: 'r\u0000', rule: 'r' },
      { name: 'r', rule: 'r', metadata: { deep: [{ x: '\u0000' }] } },
      { name: 'r', rule: 'r', metadata: { 'k\u0000': 1 } },
    ]) {
      expect(createRule(bad), JSON.stringify(bad)).to.equal(false);
    }
    expect(doc.components.schemas.JsonValue.description).to.contain('unpaired surrogate');
  });

  it('answers 405 with Allow for a method no route of an existing path declares, 404 for a path that does not exist', async () => {
    const t = await newTenant();
    for (const [method, path, allow] of [
      ['TRACE', '/api/rules', 'GET, HEAD, POST'],
      ['PUT', `/api/rules/${randomUUID()}`, 'DELETE, GET, HEAD, PATCH'],
      ['OPTIONS', '/api/threads', 'GET, HEAD, POST'],
      ['DELETE', '/api/openapi.json', 'GET, HEAD'],
    ]) {
      const res = await send(method, path, t.key);
      expect(res.status, `${method} ${path}`).to.equal(405);
      expect(res.allow).to.equal(allow);
      expect(res.body).to.deep.include({ type: 'MethodNotAllowedError' });
    }
    expect((await send('TRACE', '/api/no-such-thing')).status).to.equal(404);
  });

  it('sends SSE frames that match the event schema the document declares for each stream', async () => {
    const { modelProvider: provider, baseUrl } = getStack();
    const t = await newTenant();
    const s = await structureWithBuild(t.organizationId, { files: { 'structure.py': ECHO_PROGRAM } });
    const runId = (await as(t.key).post(`/api/structures/${s.structureId}/runs`, { args: ['x'] })).body
      .structure_run_id;
    await waitForRun(t.key, runId);
    const run = await readSse(`${baseUrl}/api/structure-runs/${runId}/events/stream?end_event=true`, t.key);
    await expectFramesMatchDocument('/api/structure-runs/{structure_run_id}/events/stream', 'get', '200', run, true);
    // The organization's run changes, from ten minutes back: the run above, as a RunSummary.
    const changes = await readSse(`${baseUrl}/api/runs/stream`, t.key, {
      lastEventId: (Date.now() - 600_000) * 1000,
      stopAfter: 1,
    });
    await expectFramesMatchDocument('/api/runs/stream', 'get', '200', changes, true, false);
    expect(changes.frames[0].data).to.include({ run_id: runId, kind: 'structure' });

    const model = provider.uniqueModel();
    provider.script({ model, text: 'one two', toolCalls: [{ name: 'T_go', arguments: '{}' }] });
    const usage = { type: 'Usage', input_tokens: null, output_tokens: null };
    const message = {
      type: 'Message',
      role: 'user',
      usage,
      content: [{ type: 'TextMessageContent', artifact: { type: 'TextArtifact', value: 'hi' } }],
    };
    const chat = await readSse(`${baseUrl}/api/chat/messages/stream`, t.key, {
      body: {
        messages: [message],
        tools: [{ name: 'T', activities: [{ name: 'go', description: '', json_schema: { type: 'object' } }] }],
        driver_configuration: { model: `local/${model}` },
      },
    });
    expect(chat.status).to.equal(201);
    await expectFramesMatchDocument('/api/chat/messages/stream', 'post', '201', chat, false);
    expect(chat.frames.map((f) => f.data.content?.type)).to.include.members([
      'TextDeltaMessageContent',
      'ActionCallDeltaMessageContent',
      undefined,
    ]);
    const failed = await readSse(`${baseUrl}/api/chat/messages/stream`, t.key, {
      body: { messages: [message], tools: [], driver_configuration: { model: `local/${provider.uniqueModel()}` } },
    });
    await expectFramesMatchDocument('/api/chat/messages/stream', 'post', '201', failed, false);
    expect(failed.frames.at(-1)!.data).to.have.property('error');
  });

  it('refuses signed asset URLs whose expiry is no plain number of seconds, even when validly signed', async () => {
    const { box, baseUrl } = getStack();
    const t = await newTenant();
    const bucketId = (await as(t.key).post('/api/buckets', { name: 'b' })).body.bucket_id;
    for (const expires of [NaN, Infinity, 1e309, 1e40]) {
      const url = presignAssetUrl(box, baseUrl, { operations: ['GET'], bucketId, name: 'a.txt', actor: 'x', expires });
      const res = await request('GET', url);
      expect(res.status, `expires=${expires}: ${res.text}`).to.equal(400);
      expect(res.body.errors[0].path).to.equal('/query/expires');
    }
  });
});
