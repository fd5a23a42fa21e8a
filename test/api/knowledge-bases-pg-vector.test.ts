// pg_vector knowledge bases: chunks in a table the platform creates in an outside PostgreSQL. The outside
// databases are real ones, created for this test on the test stack's PostgreSQL server (which has pgvector):
// one the stack's superuser owns (the job creates the extension and the table), one owned by a plain role
// that may not create the extension (the job fails saying so), and a wrong password. The password is sealed
// at once and never answered; deleting the knowledge base drops its outside table.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { Client } from 'pg';
import { as, request } from '../harness/client';
import { getStack, newTenant } from '../harness/stack';

type Api = ReturnType<typeof as>;

async function upload(api: Api, bucketId: string, name: string, content: string) {
  expect((await api.put(`/api/buckets/${bucketId}/assets`, { name })).status).to.equal(201);
  const url = await api.post(`/api/buckets/${bucketId}/asset-urls/${name}`, { operation: 'PUT' });
  expect((await request('PUT', url.body.url, undefined, { raw: content })).status).to.equal(200);
}

async function runJob(api: Api, kbId: string) {
  const created = await api.post(`/api/knowledge-bases/${kbId}/knowledge-base-jobs`);
  expect(created.status, created.text).to.equal(202);
  let job = created.body;
  for (let i = 0; i < 900 && ['QUEUED', 'RUNNING'].includes(job.status); i++) {
    await new Promise((r) => setTimeout(r, 100));
    job = (await api.get(`/api/knowledge-base-jobs/${created.body.knowledge_base_job_id}`)).body;
  }
  return job;
}

describe('pg_vector knowledge bases (an outside PostgreSQL)', function () {
  this.timeout(120_000);
  const stackUrl = () => new URL((getStack().ds.options as { url: string }).url);
  const databases: string[] = [];
  const roles: string[] = [];
  let api: Api;
  let bucketId: string;

  /** A connection string without the password, and the password, for `database` as `user`. */
  const target = (database: string, user?: string) => {
    const url = stackUrl();
    const password = decodeURIComponent(url.password);
    url.password = '';
    if (user) url.username = user;
    url.pathname = `/${database}`;
    return { connection_string: url.toString(), password };
  };
  const newDatabase = async (owner?: string) => {
    const name = `kb_outside_${randomUUID().slice(0, 8)}`;
    await getStack().ds.query(`CREATE DATABASE ${name}${owner ? ` OWNER ${owner}` : ''}`);
    databases.push(name);
    return name;
  };
  const outside = async (database: string, sql: string) => {
    const client = new Client({
      connectionString: stackUrl()
        .toString()
        .replace(/\/[^/]*$/, `/${database}`),
    });
    await client.connect();
    try {
      return (await client.query(sql)).rows;
    } finally {
      await client.end();
    }
  };

  before(async () => {
    api = as((await newTenant('kb-pg')).key);
    bucketId = (await api.post('/api/buckets', { name: 'docs' })).body.bucket_id;
    await upload(api, bucketId, 'a/rivers.txt', 'The Danube flows through Vienna and Budapest.');
    await upload(api, bucketId, 'a/peaks.md', '# Peaks\n\nMont Blanc is the highest peak of the Alps.');
  });

  after(async () => {
    for (const db of databases) await getStack().ds.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
    for (const role of roles) await getStack().ds.query(`DROP ROLE IF EXISTS ${role}`);
  });

  it('ingests into a table it creates there, queries it, never answers the password, drops it on delete', async () => {
    const db = await newDatabase();
    const config = { pg_vector: target(db) };
    const created = await api.post('/api/knowledge-bases', {
      name: 'Outside',
      type: 'pg_vector',
      config,
      asset_paths: [`${bucketId}/a/`],
    });
    expect(created.status, created.text).to.equal(201);
    const kbId: string = created.body.knowledge_base_id;
    expect(created.body.config.pg_vector).to.include({
      connection_string: config.pg_vector.connection_string,
      embedding_model: 'local/test-embedding',
    });
    expect(created.body.config.pg_vector).to.not.have.property('password');
    expect((await api.get(`/api/knowledge-bases/${kbId}`)).text).to.not.include(config.pg_vector.password);
    const [row] = await getStack().ds.query(
      `SELECT config::text AS c FROM knowledge_bases WHERE knowledge_base_id = $1`,
      [kbId],
    );
    expect(row.c).to.include('password_sealed').and.not.include(config.pg_vector.password);

    const job = await runJob(api, kbId);
    expect(job.status, JSON.stringify(job)).to.equal('SUCCEEDED');
    expect(job.status_detail.stats).to.include({ assets: 2, chunks: 2, embedded: 2 });
    const table = `tarmac_kb_chunks_${kbId.replace(/-/g, '')}`;
    const rows = await outside(db, `SELECT asset_path, embedding IS NOT NULL AS embedded FROM ${table} ORDER BY 1`);
    expect(rows).to.deep.equal([
      { asset_path: `${bucketId}/a/peaks.md`, embedded: true },
      { asset_path: `${bucketId}/a/rivers.txt`, embedded: true },
    ]);
    const ours = await getStack().ds.query(
      `SELECT count(*)::int AS n FROM knowledge_base_chunks WHERE knowledge_base_id = $1`,
      [kbId],
    );
    expect(ours[0].n).to.equal(0);
    const indexes = await outside(db, `SELECT indexname FROM pg_indexes WHERE tablename = '${table}' ORDER BY 1`);
    expect(indexes.map((i: { indexname: string }) => i.indexname)).to.include(
      `kb_chunks_hnsw_${kbId.replace(/-/g, '')}`,
    );

    const q = await api.post(`/api/knowledge-bases/${kbId}/query`, { query: 'highest peak of the Alps' });
    expect(q.status, q.text).to.equal(200);
    expect(q.body.entries[0].meta).to.include({ asset_name: 'a/peaks.md', format: 'markdown' });
    // A re-run reads the outside table back and changes nothing.
    expect((await runJob(api, kbId)).status_detail.stats).to.include({ unchanged: 2, embedded: 0 });

    const moved = await api.patch(`/api/knowledge-bases/${kbId}`, { type: 'gtc_pg_vector' });
    expect(moved.status).to.equal(409);
    expect(moved.body.errors[0].message).to.include('cannot change from pg_vector');
    expect((await api.delete(`/api/knowledge-bases/${kbId}`)).status).to.equal(204);
    expect((await outside(db, `SELECT to_regclass('${table}') AS t`))[0].t).to.equal(null);
  });

  it('refuses a password inside the connection string and other schemes; says what is wrong with the database', async () => {
    const db = await newDatabase();
    const bad = async (pgVector: Record<string, unknown>) =>
      api.post('/api/knowledge-bases', { name: 'x', type: 'pg_vector', config: { pg_vector: pgVector } });
    const withPassword = new URL(target(db).connection_string);
    withPassword.password = 'secret';
    const inUrl = await bad({ connection_string: withPassword.toString(), password: 'p' });
    expect(inUrl.status).to.equal(400);
    expect(inUrl.text).to.include('connection_string');
    expect((await bad({ connection_string: 'mysql://host/db', password: 'p' })).status).to.equal(400);
    const socket = await bad({ connection_string: 'postgres://h/db?host=/var/run/postgresql', password: 'p' });
    expect(socket.status).to.equal(400);
    expect(socket.text).to.include('connection_string');
    const file = await bad({ connection_string: 'postgres://h/db?sslmode=require&sslkey=/etc/shadow', password: 'p' });
    expect(file.status).to.equal(400);
    expect((await bad({ connection_string: target(db).connection_string })).status).to.equal(400);
    const gtc = await api.post('/api/knowledge-bases', {
      name: 'g',
      type: 'gtc_pg_vector',
      config: { gtc_pg_vector: {} },
    });
    const smuggled = await api.patch(`/api/knowledge-bases/${gtc.body.knowledge_base_id}`, {
      config: { pg_vector: target(db) },
    });
    expect(smuggled.status).to.equal(409);
    expect(smuggled.body.errors[0].message).to.include('config.pg_vector belongs to a pg_vector knowledge base');
    const pgai = await api.post('/api/knowledge-bases', {
      name: 'x',
      type: 'pgai_knowledge_base',
      config: { gtc_pg_vector: {} },
    });
    expect(pgai.status).to.equal(400);
    expect(pgai.text).to.include('pgai_knowledge_base');

    // A wrong password: the job fails, naming the outside database.
    const wrong = await api.post('/api/knowledge-bases', {
      name: 'wrong',
      type: 'pg_vector',
      config: { pg_vector: { ...target(db), password: 'not-the-password' } },
      asset_paths: [`${bucketId}/a/`],
    });
    const failed = await runJob(api, wrong.body.knowledge_base_id);
    expect(failed.status).to.equal('FAILED');
    expect(failed.status_detail.reason).to.equal('OutsideDatabaseError');
    expect(failed.status_detail.message).to.include('could not be reached').and.include('password');
    // Its query and search answer 409 naming the database: the user's to fix, not an outage of ours.
    for (const op of ['query', 'search']) {
      const refusedQuery = await api.post(`/api/knowledge-bases/${wrong.body.knowledge_base_id}/${op}`, { query: 'x' });
      expect(refusedQuery.status, refusedQuery.text).to.equal(409);
      expect(refusedQuery.body.errors[0].message).to.include('own database');
    }

    // A database whose owner may not create the vector extension (it is not a trusted extension).
    const role = `kb_plain_${randomUUID().slice(0, 8)}`;
    await getStack().ds.query(`CREATE ROLE ${role} LOGIN PASSWORD 'plain-password'`);
    roles.push(role);
    const plainDb = await newDatabase(role);
    const noVector = await api.post('/api/knowledge-bases', {
      name: 'no vector',
      type: 'pg_vector',
      config: { pg_vector: { ...target(plainDb, role), password: 'plain-password' } },
      asset_paths: [`${bucketId}/a/`],
    });
    expect(noVector.status, noVector.text).to.equal(201);
    const refused = await runJob(api, noVector.body.knowledge_base_id);
    expect(refused.status).to.equal('FAILED');
    expect(refused.status_detail.reason).to.equal('OutsideDatabaseError');
    expect(refused.status_detail.message).to.include('no "vector" extension').and.include('install pgvector');
  });
});
