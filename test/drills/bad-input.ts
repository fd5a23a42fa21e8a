// Drill: bad input on every declared route (allRoutes, so new routes are covered by themselves): malformed
// and unknown ids, another organization's ids, no or a wrong key, malformed JSON, a wrong content type, wrong
// JSON types (derived from each route's own schema), bodies over the limit, wrong query values, path
// traversal in asset names (also behind validly signed asset-data URLs); then archives whose entries escape.
// Every answer must be a 4xx `{type, errors}`, never a 5xx, and nothing may be written: the row count and a
// digest of the rows of every table (see snapshot) and the blob files are compared before and after.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { DataSource } from 'typeorm';
import { allRoutes, coerceQuery, querySchemaOf, RouteSpec } from '../../src/api/http/route';
import { allSchemas, JsonSchema, validatorFor } from '../../src/api/schemas/registry';
import { Run } from '../../src/persistence/entities';
import { presignAssetUrl } from '../../src/services/storage/buckets';
import {
  ArchiveEntry,
  config as configFile,
  entriesOf,
  makeArchive,
  uploadToNewBucket,
  waitForDeployment,
} from '../fixtures/projects';
import { structureWithBuild } from '../harness/builds';
import { as } from '../harness/client';
import { aRun, waitForRun } from '../harness/runs';
import { getStack, newTenant } from '../harness/stack';
import { DrillReport, Findings } from './kit';

const ERROR_TYPES = [
  'ValidationError',
  'UnauthorizedError',
  'ForbiddenError',
  'NotFoundError',
  'ConflictError',
  'PayloadTooLargeError',
  'UnsupportedMediaTypeError',
];

/** A valid body per operation (as in test/api/tenancy.test.ts), so a request with good ids gets past validation. */
const VALID_BODIES: Record<string, unknown> = {
  CreateApiKey: { name: 'k' },
  CreateOrganizationApiKey: { name: 'k' },
  UpdateApiKey: { name: 'k' },
  CreateInvite: { email: 'someone@example.test' },
  RespondToInvite: { response: 'ACCEPTED' },
  CreateSecret: { name: 'S', value: 'v' },
  UpdateSecret: { name: 'x' },
  CreateBucket: { name: 'b' },
  UpdateBucket: { name: 'x' },
  CreateAsset: { name: 'x' },
  CreateAssetUrl: { operation: 'GET' },
  CreateStructure: { name: 'x' },
  UpdateStructure: { name: 'x' },
  CreateStructureDeployment: { force: true },
  CreateFunction: { name: 'x' },
  UpdateFunction: { name: 'x' },
  CreateFunctionDeployment: { force: true },
  CreateTool: { name: 'x' },
  UpdateTool: { name: 'x' },
  CreateToolDeployment: { force: true },
  CreateStructureRun: { args: [] },
  CreateFunctionExecutionPost: { any: 'json' },
  RunToolActivity: { text: 'hi' },
  CreateEvents: { type: 'x', payload: {}, timestamp: 1 },
  CreateSpans: [],
  CreateConnection: { type: 'codehost', credentials: { codehost: { auth_code: 'drill-not-a-code' } } },
  CreateCheckoutSession: { price_lookup_key: 'drill-unknown-price' },
  CreateIntegration: { name: 'x', type: 'webhook', config: { webhook: {} } },
  UpdateIntegration: { name: 'x' },
  CreateDataConnector: { name: 'x', type: 'webscraper', config: { webscraper: { urls: ['http://127.0.0.1:9/'] } } },
  UpdateDataConnector: { name: 'x' },
  SearchKnowledgeBase: { query: 'x' },
  CreateRetriever: { name: 'x' },
  UpdateRetriever: { name: 'x' },
  QueryRetriever: { query: 'x' },
  CreateKnowledgeBase: { name: 'x', type: 'gtc_pg_vector', config: { gtc_pg_vector: {} } },
  UpdateKnowledgeBase: { name: 'x' },
  QueryKnowledgeBase: { query: 'x' },
};

/** Asset names that try to leave their bucket or are ambiguous, as they appear in a URL path. */
const TRAVERSAL_PATHS = [
  '../escape.txt',
  'a/../../escape.txt',
  '..',
  '.',
  './a',
  'a/./b',
  'a//b',
  '%2e%2e/escape.txt',
  '..%2fescape.txt',
  '%2e%2e%2f%2e%2e%2fescape.txt',
  'a%5c..%5cb',
  '%00',
  'a%0ab',
  `${'x'.repeat(2000)}`,
];
/** The same, decoded, as a JSON body would carry them. */
const TRAVERSAL_NAMES = [
  '../escape.txt',
  'a/../../escape.txt',
  '..',
  '/etc/passwd',
  'a\\..\\b',
  'a\u0000b',
  'a\nb',
  'a//b',
  './a',
  'x'.repeat(2000),
];

/** Values of every JSON type, tried in turn where a value of another type is expected. */
const WRONG_VALUES: unknown[] = [
  12345,
  'not-the-right-type',
  true,
  { an: 'object' },
  ['an', 'array'],
  null,
  -1,
  1.5,
  'x'.repeat(100_000),
];

interface Case {
  label: string;
  method: string;
  /** Raw request path (sent as is: `..` segments are not resolved). */
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** A specific status the answer must have. */
  expect?: number;
}

interface Answer {
  status: number;
  text: string;
}

/** One request with a raw path (fetch would resolve `..` segments before sending). */
function send(baseUrl: string, c: Case): Promise<Answer> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: hostname, port, path: c.path, method: c.method, headers: c.headers ?? {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    // A server that answers before reading the whole body (413 on a declared length) may reset the upload.
    req.on('error', (err) => reject(err));
    req.setTimeout(30_000, () => req.destroy(new Error('no answer within 30 s')));
    req.end(c.body);
  });
}

/** Wrong-typed bodies for a route: the whole body, then each property in turn, each one invalid by the route's own schema. */
function wrongBodies(spec: RouteSpec): Array<[string, unknown]> {
  if (!spec.body) return [];
  const validate = validatorFor(spec.body);
  const invalid = (v: unknown) => !validate(structuredClone(v));
  const out: Array<[string, unknown]> = [];
  for (const v of [[], 'text', 42, true, null]) if (invalid(v)) out.push([`body ${JSON.stringify(v)}`, v]);
  const base = VALID_BODIES[spec.operationId] ?? {};
  if (typeof base !== 'object' || base === null || Array.isArray(base)) return out;
  for (const prop of Object.keys(propertiesOf(spec.body))) {
    const wrong = WRONG_VALUES.find((v) => invalid({ ...base, [prop]: v }));
    if (wrong !== undefined)
      out.push([`body.${prop} = ${JSON.stringify(wrong).slice(0, 20)}`, { ...base, [prop]: wrong }]);
  }
  return out;
}

/** Properties of a body schema, following a registry `$ref` and the members of a oneOf. */
function propertiesOf(schema: JsonSchema): Record<string, unknown> {
  const ref = schema.$ref as string | undefined;
  if (ref) return propertiesOf(allSchemas()[ref.split('/').pop()!]);
  const own = (schema.properties ?? {}) as Record<string, unknown>;
  const variants = ((schema.oneOf ?? schema.anyOf ?? []) as JsonSchema[]).map(propertiesOf);
  return Object.assign({}, ...variants, own);
}

/** Wrong query strings for a route: for each declared parameter the first candidate its schema refuses. */
function wrongQueries(spec: RouteSpec, pageSizeMax: number): string[] {
  const schema = querySchemaOf(spec, pageSizeMax);
  const validate = validatorFor({ type: 'object', properties: schema });
  const out: string[] = [];
  for (const name of Object.keys(schema)) {
    for (const candidate of ['abc', '0', '-1', String(pageSizeMax + 1), '1e999', 'NOT_A_VALUE', '2024-13-45', '']) {
      if (!validate(coerceQuery({ [name]: candidate }, schema))) {
        out.push(`${name}=${encodeURIComponent(candidate)}`);
        break;
      }
    }
  }
  return out;
}

/**
 * Row counts of every table, and a digest of the rows, for the two organizations: a table with an
 * organization_id counts theirs, one with a run_id the rows of their runs, any other all its rows. (Other
 * tests' runs may still be writing on the shared stack; their rows are not ours to count.)
 */
async function snapshot(ds: DataSource, orgs: string[]): Promise<Record<string, string | number>> {
  const columns: Array<{ table_name: string; column_name: string }> = await ds.query(
    `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public' AND table_name IN
       (SELECT tablename FROM pg_tables WHERE schemaname = 'public') ORDER BY table_name`,
  );
  const tables = [...new Set(columns.map((c) => c.table_name))];
  const has = (table: string, column: string) =>
    columns.some((c) => c.table_name === table && c.column_name === column);
  const out: Record<string, string | number> = {};
  for (const table of tables) {
    const scope = has(table, 'organization_id')
      ? `WHERE organization_id = ANY($1::uuid[])`
      : has(table, 'run_id')
        ? `WHERE run_id IN (SELECT run_id FROM runs WHERE organization_id = ANY($1::uuid[]))`
        : '';
    // A refused hit of an integration's handler is logged (the delivery log is how a user sees why nothing
    // started): only deliveries that were let in count as written.
    // So is a refused request that the audit log records (docs/people.md#audit-log): its event says it was
    // refused; only the events of requests that succeeded count as written.
    const filter =
      table === 'integration_deliveries'
        ? ` AND verdict IN ('accepted', 'duplicate', 'ignored', 'challenge')`
        : table === 'audit_events'
          ? ' AND status < 400'
          : '';
    // Authentication refreshes api_keys.last_used: a write of the request's own, not of its input.
    const row = table === 'api_keys' ? '(t.api_key_id, t.name, t.active, t.run_id)::text' : 't::text';
    const [{ n, digest }] = await ds.query(
      `SELECT count(*)::int AS n, md5(coalesce(string_agg(${row}, '|' ORDER BY ${row}), '')) AS digest FROM "${table}" t ${scope}${filter}`,
      scope ? [orgs] : [],
    );
    out[table] = n;
    out[`${table} (digest)`] = digest;
  }
  return out;
}

function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return (fs.readdirSync(dir, { recursive: true }) as string[])
    .filter((f) => fs.statSync(path.join(dir, f)).isFile())
    .sort();
}

/** A tenant with one record of every kind a route can name. */
async function recordsOfEveryKind() {
  const { ds } = getStack();
  const a = await newTenant('drill-input');
  const api = as(a.key);
  const orgKey = await api.post(`/api/organizations/${a.organizationId}/api-keys`, { name: 'org key' });
  const invite = await api.post(`/api/organizations/${a.organizationId}/invites`, {
    email: `invitee-${randomUUID()}@example.test`,
  });
  const secret = await api.post('/api/secrets', { name: 'S', value: 'v' });
  const bucket = await api.post('/api/buckets', { name: 'b' });
  await api.put(`/api/buckets/${bucket.body.bucket_id}/assets`, { name: 'dir/file.txt' });
  const structure = await structureWithBuild(a.organizationId, {
    files: { 'structure.py': 'print(1)\n' },
    webhookEnabled: true,
  });
  const run = await api.post(`/api/structures/${structure.structureId}/runs`, { args: [] });
  await waitForRun(a.key, run.body.structure_run_id);
  const events = await api.get(`/api/structure-runs/${run.body.structure_run_id}/events`);
  const fn = await structureWithBuild(a.organizationId, {
    kind: 'function',
    files: { 'f.py': 'def handler(event):\n    return 1\n' },
    mainFile: 'f.py',
  });
  const tool = await structureWithBuild(a.organizationId, {
    kind: 'tool',
    mainFile: 't.py',
    files: { 't.py': 'class T:\n    def echo(self, p):\n        return p\n\ndef init_tool():\n    return T()\n' },
  });
  // Ended runs of the function and the tool, as rows: their routes only read them.
  const ended = async (kind: 'function' | 'tool', resourceId: string, deploymentId: string) => {
    const runId = randomUUID();
    const now = new Date();
    await ds.getRepository(Run).save(
      aRun(
        {
          run_id: runId,
          kind,
          organization_id: a.organizationId,
          resource_id: resourceId,
          deployment_id: deploymentId,
          status: 'SUCCEEDED',
          input: {},
          output: 1,
          started_at: now,
          completed_at: now,
          created_by: a.userId,
        },
        now,
      ),
    );
    return runId;
  };
  const connection = await api.post('/api/connections', {
    type: 'codehost',
    credentials: { codehost: { auth_code: getStack().codehost.issueCode() } },
  });
  const integration = await api.post('/api/integrations', {
    name: 'I',
    type: 'webhook',
    config: { webhook: {} },
    structure_ids: [structure.structureId],
  });
  // A knowledge base with an ended job (its asset has no bytes: an entry of errors[]) and a persisted query.
  const kb = await api.post('/api/knowledge-bases', {
    name: 'KB',
    type: 'gtc_hybrid_sql_pg_vector',
    config: { gtc_hybrid_sql_pg_vector: {} },
    asset_paths: [`${bucket.body.bucket_id}/dir/`],
  });
  const kbJob = await api.post(`/api/knowledge-bases/${kb.body.knowledge_base_id}/knowledge-base-jobs`);
  for (let i = 0; i < 300; i++) {
    const job = await api.get(`/api/knowledge-base-jobs/${kbJob.body.knowledge_base_job_id}`);
    if (!['QUEUED', 'RUNNING'].includes(job.body.status)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const kbQuery = await api.post(`/api/knowledge-bases/${kb.body.knowledge_base_id}/query`, { query: 'file' });
  const ids: Record<string, string> = {
    organization_id: a.organizationId,
    integration_id: integration.body.integration_id,
    user_id: a.userId,
    api_key_id: orgKey.body.api_key_id,
    invite_id: invite.body.invite_id,
    secret_id: secret.body.secret_id,
    bucket_id: bucket.body.bucket_id,
    name: 'dir/file.txt',
    structure_id: structure.structureId,
    function_id: fn.structureId,
    tool_id: tool.structureId,
    deployment_id: structure.deploymentId,
    structure_run_id: run.body.structure_run_id,
    event_id: events.body.events[0].event_id,
    function_run_id: await ended('function', fn.structureId, fn.deploymentId),
    tool_run_id: await ended('tool', tool.structureId, tool.deploymentId),
    activity_name: 'echo',
    connection_id: connection.body.connection_id,
    knowledge_base_id: kb.body.knowledge_base_id,
    knowledge_base_job_id: kbJob.body.knowledge_base_job_id,
    knowledge_base_query_id: kbQuery.body.knowledge_base_query_id,
  };
  return { a, ids };
}

export async function badInputDrill(): Promise<DrillReport> {
  const f = new Findings(
    'bad-input',
    'every route fed malformed, unknown, foreign and traversal input; unsafe archives',
  );
  const { ds, config, baseUrl, box } = getStack();
  const { a, ids } = await recordsOfEveryKind();
  const b = await newTenant('drill-input-other');
  const orgs = [a.organizationId, b.organizationId];
  const before = await snapshot(ds, orgs);
  const blobsBefore = filesUnder(config.blobDir);

  const json = (key: string | undefined, body?: unknown): Pick<Case, 'headers' | 'body'> => ({
    headers: {
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const cases: Case[] = [];
  for (const r of allRoutes()) {
    const names = Object.keys(r.params ?? {});
    const isUuid = (n: string) => (r.params![n] as { format?: string }).format === 'uuid';
    const fill = (value: (n: string) => string) => `/api${r.path.replace(/\{(\w+)\}/g, (_, n: string) => value(n))}`;
    const own = fill((n) => ids[n] ?? (isUuid(n) ? randomUUID() : 'x'));
    const valid = r.body ? (VALID_BODIES[r.operationId] ?? {}) : undefined;
    const add = (label: string, c: Omit<Case, 'label' | 'method'>) =>
      cases.push({ label: `${r.operationId} ${label}`, method: r.method.toUpperCase(), ...c });
    const keyed = r.auth !== 'none';

    for (const n of names.filter(isUuid)) {
      add(`malformed ${n}`, {
        path: fill((m) => (m === n ? 'not-a-uuid' : (ids[m] ?? randomUUID()))),
        ...json(a.key, valid),
      });
      add(`unknown ${n}`, {
        path: fill((m) => (m === n ? randomUUID() : (ids[m] ?? randomUUID()))),
        ...json(a.key, valid),
      });
    }
    if (keyed && names.length && names.every((n) => n in ids)) add('foreign ids', { path: own, ...json(b.key, valid) });
    if (keyed) {
      add('no key', { path: own, ...json(undefined, valid) });
      add('wrong key', { path: own, ...json('tmk_not-a-key', valid) });
    }
    if (r.body) {
      add('malformed JSON', {
        path: own,
        headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' },
        body: '{"name": "x",',
      });
      add('text body', {
        path: own,
        headers: { authorization: `Bearer ${a.key}`, 'content-type': 'text/plain' },
        body: 'name=x',
      });
      add('oversize body', { path: own, ...json(a.key, { name: 'x'.repeat(config.maxJsonBodyBytes) }) });
      for (const [label, body] of wrongBodies(r)) add(label, { path: own, ...json(a.key, body) });
    }
    for (const q of wrongQueries(r, config.pageSizeMax))
      add(`query ${q.slice(0, 30)}`, { path: `${own}?${q}`, ...json(keyed ? a.key : undefined, valid) });
    if (r.greedyParam) {
      for (const name of TRAVERSAL_PATHS) {
        add(`traversal ${name.slice(0, 30)}`, {
          path: fill((m) => (m === r.greedyParam ? name : ids[m])),
          ...json(keyed ? a.key : undefined, valid),
        });
      }
    }
  }
  // The body side of asset names, and presigned URLs signed (validly) for traversal names.
  for (const name of TRAVERSAL_NAMES) {
    cases.push({
      label: `CreateAsset traversal ${JSON.stringify(name).slice(0, 30)}`,
      method: 'PUT',
      path: `/api/buckets/${ids.bucket_id}/assets`,
      ...json(a.key, { name }),
    });
    for (const operation of ['GET', 'PUT'] as const) {
      const url = new URL(
        presignAssetUrl(box, baseUrl, {
          operations: [operation],
          bucketId: ids.bucket_id,
          name,
          expires: Math.floor(Date.now() / 1000) + 600,
          actor: a.userId,
        }),
      );
      cases.push({
        label: `asset-data ${operation} signed for ${JSON.stringify(name).slice(0, 30)}`,
        method: operation,
        path: url.pathname + url.search,
        body: operation === 'PUT' ? 'escaped' : undefined,
      });
    }
  }
  // Control: the same signing for a good name is accepted (404: the asset's bytes were never uploaded).
  const control = new URL(
    presignAssetUrl(box, baseUrl, {
      operations: ['GET'],
      bucketId: ids.bucket_id,
      name: ids.name,
      expires: Math.floor(Date.now() / 1000) + 600,
      actor: a.userId,
    }),
  );
  cases.push({
    label: 'asset-data GET signed for a good name',
    method: 'GET',
    path: control.pathname + control.search,
    expect: 404,
  });
  const signedPut = new URL(
    presignAssetUrl(box, baseUrl, {
      operations: ['PUT'],
      bucketId: ids.bucket_id,
      name: 'big.bin',
      expires: Math.floor(Date.now() / 1000) + 600,
      actor: a.userId,
    }),
  );
  cases.push({
    label: 'asset-data PUT declared over MAX_ASSET_BYTES',
    method: 'PUT',
    path: signedPut.pathname + signedPut.search,
    headers: { 'content-length': String(config.maxAssetBytes + 1) },
  });

  // Sent four at a time; every answer a 4xx `{type, errors}`.
  const byStatus: Record<string, number> = {};
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < cases.length) {
        const c = cases[next++];
        f.faults++;
        let res: Answer;
        try {
          res = await send(baseUrl, c);
        } catch (err) {
          f.violation(`${c.label}: no answer (${(err as Error).message})`);
          continue;
        }
        f.checked++;
        byStatus[res.status] = (byStatus[res.status] ?? 0) + 1;
        let body: { type?: unknown; errors?: Array<{ message?: unknown }> } | undefined;
        try {
          body = JSON.parse(res.text);
        } catch {
          body = undefined;
        }
        const shaped =
          typeof body?.type === 'string' &&
          ERROR_TYPES.includes(body.type) &&
          Array.isArray(body.errors) &&
          body.errors.length > 0 &&
          body.errors.every((e) => typeof e.message === 'string');
        if (c.expect && res.status !== c.expect)
          f.violation(`${c.label}: answered ${res.status}, expected ${c.expect}: ${res.text.slice(0, 200)}`);
        else if (res.status < 400 || res.status >= 500 || !shaped)
          f.violation(
            `${c.label}: ${c.method} ${c.path.slice(0, 120)} answered ${res.status} ${res.text.slice(0, 200)}`,
          );
      }
    }),
  );
  f.notes.push(
    `${cases.length} requests on ${allRoutes().length} routes: ${Object.entries(byStatus)
      .map(([s, n]) => `${n} × ${s}`)
      .join(', ')}`,
  );
  for (const [s, n] of Object.entries(byStatus)) f.count(`status ${s}`, n);

  // Nothing was written.
  const after = await snapshot(ds, orgs);
  for (const key of Object.keys({ ...before, ...after })) {
    if (before[key] === after[key]) continue;
    if (typeof before[key] === 'number' && typeof after[key] === 'number')
      f.violation(`table ${key}: ${Number(after[key]) - Number(before[key])} rows written by refused requests`);
    else f.violation(`${key} changed: rows were modified by refused requests`);
  }
  const blobsAfter = filesUnder(config.blobDir);
  const newBlobs = blobsAfter.filter((x) => !blobsBefore.includes(x));
  if (newBlobs.length) f.violation(`blob files written by refused requests: ${newBlobs.slice(0, 5).join(', ')}`);
  f.checked += Object.keys(after).length;

  await unsafeArchives(f);
  return f.report();
}

/** Archives whose entries would land outside their build directory: FAILED UnsafeArchive, nothing written outside. */
async function unsafeArchives(f: Findings): Promise<void> {
  const { buildDir } = getStack().config;
  const t = await newTenant('drill-archives');
  const marker = `drill-escape-${randomUUID().slice(0, 8)}`;
  const project = entriesOf({
    'structure_config.yaml': configFile('nodejs', '  main_file: main.js\n'),
    'main.js': 'console.log(1)\n',
  });
  const archives: Array<[string, 'zip' | 'tar.gz', ArchiveEntry[]]> = [
    ['zip ../ entry', 'zip', [{ name: `../${marker}`, content: 'x' }]],
    ['tar.gz ../../ entry', 'tar.gz', [{ name: `a/../../${marker}`, content: 'x' }]],
    ['tar.gz absolute entry', 'tar.gz', [{ name: `/tmp/${marker}`, content: 'x' }]],
    [
      'tar.gz write through a symlink out',
      'tar.gz',
      [
        { name: 'link', symlink: '../../..' },
        { name: `link/tmp/${marker}`, content: 'x' },
      ],
    ],
    ['zip absolute symlink', 'zip', [{ name: 'link', symlink: '/tmp' }]],
  ];
  const results = await Promise.all(
    archives.map(async ([label, kind, entries]) => {
      const bucketId = await uploadToNewBucket(t.key, `p.${kind}`, makeArchive(kind, [...entries, ...project]));
      const created = await as(t.key).post('/api/structures', {
        name: label,
        code: { data_lake: { bucket_id: bucketId, asset_path: `p.${kind}` } },
      });
      if (created.status !== 201) return [label, `structure: ${created.status} ${created.text}`] as const;
      const done = await waitForDeployment(t.key, created.body.latest_deployment_id, 120_000);
      const inBuild = fs.existsSync(path.join(buildDir, done.deployment_id));
      return [
        label,
        done.status === 'FAILED' && done.status_detail?.reason === 'UnsafeArchive' && !inBuild
          ? 'ok'
          : `${done.status} ${JSON.stringify(done.status_detail)}${inBuild ? ' (build directory left)' : ''}`,
      ] as const;
    }),
  );
  for (const [label, outcome] of results) {
    f.faults++;
    f.checked++;
    if (outcome !== 'ok') f.violation(`archive with ${label}: ${outcome}`);
  }
  const escaped = [
    path.join(buildDir, marker),
    path.join(path.dirname(buildDir), marker),
    `/tmp/${marker}`,
    path.join('/', marker),
  ].filter((p) => fs.existsSync(p));
  if (escaped.length) f.violation(`archive entries written outside their build: ${escaped.join(', ')}`);
  f.count('archives', archives.length);
}
