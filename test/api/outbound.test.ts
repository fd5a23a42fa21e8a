// The outbound address policy through the public api, as an ordinary organization would aim the platform's
// outbound features at the host: a webscraper and an objstore endpoint at this host's own non-loopback
// interface address (a listener there counts what arrives: nothing may), and pg_vector knowledge bases at
// the stack's PostgreSQL on 127.0.0.1, at metadata, at a closed port, at a service that is not PostgreSQL and
// with a wrong password: every one fails with the same words (no port scanner).
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { OUTSIDE_UNREACHABLE } from '../../src/services/knowledge/index/chunk-store';
import { as, request } from '../harness/client';
import { hostInterfaceAddress, startHostWitness, type HostWitness } from '../harness/host-witness';
import { freePort, getStack, newTenant, OUTSIDE_HOST } from '../harness/stack';

type Api = ReturnType<typeof as>;

async function until<T>(what: string, read: () => Promise<T>, done: (v: T) => boolean): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const dataJobEnd = (api: Api, jobId: string) =>
  until(
    `data job ${jobId}`,
    async () => (await api.get(`/api/data-jobs/${jobId}`)).body,
    (job) => ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(job.status),
  );

describe('outbound address policy (through the api)', function () {
  this.timeout(120_000);
  let api: Api;
  let witness: HostWitness;
  let hostAddress: string;

  before(async () => {
    api = as((await newTenant('outbound')).key);
    witness = await startHostWitness();
    hostAddress = hostInterfaceAddress();
  });
  after(() => witness.close());

  it("a webscraper aimed at this host's own interface address ends with the items refused, nothing fetched", async () => {
    const urls = [`http://${hostAddress}:${witness.port}/`, `http://${hostAddress}:${witness.port + 1}/x`];
    const created = await api.post('/api/data-connectors', {
      name: 'self',
      type: 'webscraper',
      config: { webscraper: { urls } },
    });
    expect(created.status, created.text).to.equal(201);
    const job = await dataJobEnd(api, created.body.data_job_id);
    expect(job.errors.map((e: { type: string }) => e.type)).to.deep.equal(['AddressRefused', 'AddressRefused']);
    // The same words for both ports: nothing tells them apart.
    expect(new Set(job.errors.map((e: { message: string }) => e.message)).size).to.equal(1);
    expect(job.bytes_ingested).to.equal(0);
    expect(witness.connections).to.deep.equal([]);
  });

  it("an objstore endpoint on this host's own address is refused before any connection", async () => {
    const created = await api.post('/api/data-connectors', {
      name: 'self s3',
      type: 'objstore',
      config: {
        objstore: {
          objstore_access_key_id: 'AKIAEXAMPLE',
          objstore_secret_access_key: 'secret',
          uris: ['s3://lake/docs/'],
          objstore_endpoint: `http://${hostAddress}:${witness.port}`,
          objstore_force_path_style: true,
        },
      },
    });
    expect(created.status, created.text).to.equal(201);
    const job = await dataJobEnd(api, created.body.data_job_id);
    expect(job.status).to.equal('FAILED');
    expect(JSON.stringify(job.status_detail)).to.include('AddressRefused');
    expect(witness.connections).to.deep.equal([]);
  });

  it('pg_vector: PostgreSQL on 127.0.0.1, metadata, a closed port, a non-PostgreSQL service and a wrong password read the same', async () => {
    const bucketId = (await api.post('/api/buckets', { name: 'kb-docs' })).body.bucket_id;
    expect((await api.put(`/api/buckets/${bucketId}/assets`, { name: 'a/x.txt' })).status).to.equal(201);
    const put = await api.post(`/api/buckets/${bucketId}/asset-urls/a/x.txt`, { operation: 'PUT' });
    expect((await request('PUT', put.body.url, undefined, { raw: 'some text' })).status).to.equal(200);

    const stackDb = new URL((getStack().ds.options as { url: string }).url);
    const notPostgres = await startHostWitness(OUTSIDE_HOST); // allowed by the stack: really connected to
    const closedPort = await freePort();
    const targets: Record<string, string> = {
      'the platform database at 127.0.0.1': `postgres://${stackDb.username}@127.0.0.1:${stackDb.port}/tarmac_test`,
      metadata: 'postgres://postgres@169.254.169.254:5432/postgres',
      "this host's interface address": `postgres://postgres@${hostAddress}:${witness.port}/postgres`,
      'a closed port (allowed)': `postgres://postgres@${OUTSIDE_HOST}:${closedPort}/postgres`,
      'a non-PostgreSQL service (allowed)': `postgres://postgres@${OUTSIDE_HOST}:${notPostgres.port}/postgres`,
      'a wrong password (allowed)': `postgres://${stackDb.username}@${stackDb.host}/tarmac_test`,
    };
    try {
      const answers: Record<string, string> = {};
      for (const [what, connectionString] of Object.entries(targets)) {
        const kb = await api.post('/api/knowledge-bases', {
          name: `kb ${randomUUID().slice(0, 8)}`,
          type: 'pg_vector',
          config: { pg_vector: { connection_string: connectionString, password: 'guessed-password' } },
          asset_paths: [`${bucketId}/a/`],
        });
        expect(kb.status, `${what}: ${kb.text}`).to.equal(201);
        const id = kb.body.knowledge_base_id;
        const started = await api.post(`/api/knowledge-bases/${id}/knowledge-base-jobs`);
        expect(started.status, started.text).to.equal(202);
        const job = await until(
          `knowledge base job of ${what}`,
          async () => (await api.get(`/api/knowledge-base-jobs/${started.body.knowledge_base_job_id}`)).body,
          (j) => !['QUEUED', 'RUNNING'].includes(j.status),
        );
        expect(job.status, what).to.equal('FAILED');
        expect(job.status_detail.reason, what).to.equal('OutsideDatabaseError');
        const query = await api.post(`/api/knowledge-bases/${id}/query`, { query: 'x' });
        expect(query.status, what).to.equal(409);
        answers[what] = `${job.status_detail.message} | ${query.body.errors[0].message}`;
      }
      expect(new Set(Object.values(answers)).size, JSON.stringify(answers, null, 1)).to.equal(1);
      expect(Object.values(answers)[0]).to.include(OUTSIDE_UNREACHABLE);
      expect(notPostgres.connections.length, 'the allowed non-PostgreSQL service was reached').to.be.greaterThan(0);
      expect(witness.connections, "nothing reached this host's own address").to.deep.equal([]);
    } finally {
      await notPostgres.close();
    }
  });
});
