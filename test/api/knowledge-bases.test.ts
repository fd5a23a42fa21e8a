// Knowledge bases through HTTP: CRUD and its refusals, a job that ingests text, Markdown, HTML, JSON, CSV and
// PDF assets (a broken PDF and an image are per-asset errors), hybrid queries with filters, incremental re-runs (only changed chunks
// are embedded again, chunks of assets no longer covered are removed), and cancelling a job whose embedding
// request hangs, and an embedding provider that rate-limits (429 with Retry-After: retried after the wait) or
// keeps failing for one asset (retried, then that asset is an `errors[]` entry with nothing of it written). The stack's model provider embeds with a hashed bag of words (test/harness/model-provider.ts).
import { expect } from 'chai';
import { as, request } from '../harness/client';
import { getStack, newTenant } from '../harness/stack';
import { makePdf } from '../fixtures/pdf';

type Api = ReturnType<typeof as>;

async function upload(api: Api, bucketId: string, name: string, content: string | Buffer) {
  expect((await api.put(`/api/buckets/${bucketId}/assets`, { name })).status).to.equal(201);
  const url = await api.post(`/api/buckets/${bucketId}/asset-urls/${name}`, { operation: 'PUT' });
  const put = await request('PUT', url.body.url, undefined, { raw: content });
  expect(put.status, put.text).to.equal(200);
}

async function jobEnd(api: Api, jobId: string, statuses = ['SUCCEEDED', 'FAILED', 'CANCELLED']) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const job = await api.get(`/api/knowledge-base-jobs/${jobId}`);
    expect(job.status, job.text).to.equal(200);
    if (statuses.includes(job.body.status) || Date.now() > deadline) return job.body;
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function runJob(api: Api, kbId: string) {
  const created = await api.post(`/api/knowledge-bases/${kbId}/knowledge-base-jobs`);
  expect(created.status, created.text).to.equal(202);
  expect(created.body.status).to.equal('QUEUED');
  return jobEnd(api, created.body.knowledge_base_job_id);
}

const embeddedTexts = () =>
  getStack()
    .modelProvider.embeddingRequests.filter((r) => r.model === 'test-embedding')
    .flatMap((r) => r.input);

describe('knowledge bases', () => {
  let api: Api;
  let bucketId: string;

  before(async () => {
    const t = await newTenant('kb');
    api = as(t.key);
    bucketId = (await api.post('/api/buckets', { name: 'docs' })).body.bucket_id;
  });

  it('creates, reads, lists, updates and deletes; refuses unserved types and unknown or foreign buckets', async () => {
    const created = await api.post('/api/knowledge-bases', {
      name: 'KB',
      type: 'gtc_hybrid_sql_pg_vector',
      config: { gtc_hybrid_sql_pg_vector: {} },
      asset_paths: [`${bucketId}/docs/`],
    });
    expect(created.status, created.text).to.equal(201);
    expect(created.body).to.include({ name: 'KB', retrieval: 'hybrid', embedding_dimensions: null });
    expect(created.body.config.gtc_hybrid_sql_pg_vector).to.include({
      embedding_model: 'local/test-embedding',
      use_default_embedding_model: true,
    });
    const id = created.body.knowledge_base_id;
    expect((await api.get(`/api/knowledge-bases/${id}`)).body.asset_paths).to.deep.equal([`${bucketId}/docs/`]);
    const list = await api.get('/api/knowledge-bases?page_size=1');
    expect(list.body.knowledge_bases.map((k: any) => k.knowledge_base_id)).to.deep.equal([id]);
    const patched = await api.patch(`/api/knowledge-bases/${id}`, { name: 'Renamed', type: 'gtc_pg_vector' });
    expect(patched.body).to.include({ name: 'Renamed', type: 'gtc_pg_vector', retrieval: 'vector' });

    const pgai = await api.post('/api/knowledge-bases', {
      name: 'x',
      type: 'pgai_knowledge_base',
      config: { gtc_pg_vector: {} },
    });
    expect(pgai.status).to.equal(400);
    expect(pgai.text).to.include('pgai_knowledge_base').and.include('not served');
    // pg_vector (test/api/knowledge-bases-pg-vector.test.ts) needs its own config member.
    const pg = await api.post('/api/knowledge-bases', { name: 'x', type: 'pg_vector', config: { gtc_pg_vector: {} } });
    expect(pg.status).to.equal(400);
    expect(pg.text).to.include('pg_vector');
    const missing = '0b7e4d52-8f3a-4c1e-9d2b-3a4f5e6d7c8b';
    const unknown = await api.post('/api/knowledge-bases', {
      name: 'x',
      type: 'gtc_pg_vector',
      config: { gtc_pg_vector: {} },
      asset_paths: [`${missing}/a.txt`],
    });
    expect(unknown.status).to.equal(409);
    expect(unknown.body.errors[0]).to.deep.include({
      message: `Bucket not found: ${missing}`,
      path: '/body/asset_paths/0',
    });
    const other = as((await newTenant('kb-other')).key);
    const foreign = await other.post('/api/knowledge-bases', {
      name: 'x',
      type: 'gtc_pg_vector',
      config: { gtc_pg_vector: {} },
      asset_paths: [`${bucketId}/`],
    });
    expect(foreign.status).to.equal(409);
    expect((await other.get(`/api/knowledge-bases/${id}`)).status).to.equal(404);

    expect((await api.delete(`/api/knowledge-bases/${id}`)).status).to.equal(204);
    expect((await api.get(`/api/knowledge-bases/${id}`)).status).to.equal(404);
  });

  it('ingests the covered assets, answers hybrid queries and re-runs incrementally', async function () {
    this.timeout(90_000);
    await upload(api, bucketId, 'docs/france.txt', 'The capital of France is Paris. Paris lies on the Seine river.');
    await upload(api, bucketId, 'docs/notes.md', '# Volcanoes\n\nIceland has many active volcanoes and glaciers.');
    await upload(
      api,
      bucketId,
      'docs/page.html',
      '<html><head><style>p{}</style><script>var secret=1</script></head><body><h1>Penguins</h1><p>Penguins live in Antarctica &amp; eat krill.</p></body></html>',
    );
    await upload(api, bucketId, 'docs/data.json', JSON.stringify({ animal: { name: 'Octopus', arms: 8 } }));
    await upload(api, bucketId, 'docs/table.csv', 'city,river\nLondon,Thames\nVienna,Danube\n');
    await upload(api, bucketId, 'docs/report.pdf', Buffer.from('%PDF-1.4 binary'));
    await upload(api, bucketId, 'docs/photo.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0]));
    await upload(
      api,
      bucketId,
      'docs/guide.pdf',
      await makePdf([['Axolotls regrow their limbs.'], ['They live in lakes near Mexico City.']], 'Axolotl guide'),
    );
    await upload(api, bucketId, 'elsewhere.txt', 'Not covered: Paris Paris Paris.');

    const kb = (
      await api.post('/api/knowledge-bases', {
        name: 'Docs',
        type: 'gtc_hybrid_sql_pg_vector',
        config: { gtc_hybrid_sql_pg_vector: {} },
        asset_paths: [`${bucketId}/docs/`],
      })
    ).body;
    const before = embeddedTexts().length;
    const job = await runJob(api, kb.knowledge_base_id);
    expect(job.status, JSON.stringify(job)).to.equal('SUCCEEDED');
    expect(job.errors).to.have.length(2);
    expect(job.errors[0]).to.deep.include({ type: 'UnsupportedFormat', path: `${bucketId}/docs/photo.png` });
    expect(job.errors[1]).to.deep.include({ type: 'InvalidContent', path: `${bucketId}/docs/report.pdf` });
    expect(job.errors[1].message).to.include('docs/report.pdf is not a readable PDF');
    expect(job.bytes_ingested).to.be.greaterThan(100);
    expect(job.completed_at).to.be.a('string');
    expect(embeddedTexts().length - before).to.equal(6);
    expect(embeddedTexts().join(' ')).to.not.include('secret');
    expect((await api.get(`/api/knowledge-bases/${kb.knowledge_base_id}`)).body.embedding_dimensions).to.equal(64);

    const q = await api.post(`/api/knowledge-bases/${kb.knowledge_base_id}/query`, {
      query: 'What is the capital of France?',
      query_args: { count: 3, include_vectors: true },
    });
    expect(q.status, q.text).to.equal(200);
    expect(q.body.entries.length).to.be.within(1, 3);
    const [top] = q.body.entries;
    expect(top.meta).to.include({ asset_path: `${bucketId}/docs/france.txt`, chunk_index: '0' });
    expect(top.meta.content).to.include('Paris');
    expect(top.vector).to.have.length(64);
    expect(top.score).to.be.greaterThan(0);
    // Filters match meta members; the uncovered asset never appears.
    const filtered = await api.post(`/api/knowledge-bases/${kb.knowledge_base_id}/query`, {
      query: 'Paris',
      query_args: { filter: { asset_name: 'docs/notes.md' } },
    });
    expect(filtered.body.entries.map((e: any) => e.meta.asset_name)).to.deep.equal(['docs/notes.md']);
    const html = await api.post(`/api/knowledge-bases/${kb.knowledge_base_id}/query`, { query: 'krill Antarctica' });
    expect(html.body.entries[0].meta.content).to.equal('page › Penguins\n\nPenguins live in Antarctica & eat krill.');
    expect(html.body.entries[0]).to.not.have.property('vector');
    // A PDF's text, with its own metadata in meta.
    const pdf = await api.post(`/api/knowledge-bases/${kb.knowledge_base_id}/query`, { query: 'axolotls limbs' });
    expect(pdf.body.entries[0].meta).to.include({
      asset_name: 'docs/guide.pdf',
      chunk_index: '0',
      format: 'pdf',
      pages: '2',
      title: 'Axolotl guide',
    });
    expect(pdf.body.entries[0].meta.content).to.equal(
      'Axolotl guide\n\nAxolotls regrow their limbs.\n\nThey live in lakes near Mexico City.',
    );

    const stored = await api.get(`/api/knowledge-base-queries/${q.body.knowledge_base_query_id}`);
    expect(stored.body).to.deep.equal(q.body);
    const queries = await api.get(`/api/knowledge-bases/${kb.knowledge_base_id}/queries`);
    expect(queries.body.pagination.total_count).to.equal(4);
    for (const bad of [
      { query: '' },
      { query: 'x', query_args: { count: 0 } },
      { query: 'x', query_args: { count: 101 } },
    ])
      expect((await api.post(`/api/knowledge-bases/${kb.knowledge_base_id}/query`, bad)).status).to.equal(400);

    // A re-run with nothing changed embeds nothing; a changed asset embeds only its new chunk.
    const mark = embeddedTexts().length;
    expect((await runJob(api, kb.knowledge_base_id)).status).to.equal('SUCCEEDED');
    expect(embeddedTexts().length).to.equal(mark);
    await upload(api, bucketId, 'docs/france.txt', 'The capital of France is Paris. It has the Louvre.');
    expect((await runJob(api, kb.knowledge_base_id)).status).to.equal('SUCCEEDED');
    expect(embeddedTexts().slice(mark)).to.deep.equal(['france\n\nThe capital of France is Paris. It has the Louvre.']);

    // Narrowing the asset paths removes the chunks of assets no longer covered.
    await api.patch(`/api/knowledge-bases/${kb.knowledge_base_id}`, { asset_paths: [`${bucketId}/docs/notes.md`] });
    const narrowed = await runJob(api, kb.knowledge_base_id);
    expect(narrowed.status_detail.stats).to.include({ assets: 1, removed: 5 });
    const after = await api.post(`/api/knowledge-bases/${kb.knowledge_base_id}/query`, { query: 'Paris volcanoes' });
    expect(after.body.entries.map((e: any) => e.meta.asset_name)).to.deep.equal(['docs/notes.md']);
    const jobs = await api.get(`/api/knowledge-bases/${kb.knowledge_base_id}/knowledge-base-jobs?status=SUCCEEDED`);
    expect(jobs.body.pagination.total_count).to.equal(4);
  });

  it('moves to another model: the vectors are forgotten, full text answers until the job re-embeds every chunk', async () => {
    const provider = getStack().modelProvider;
    const other = provider.uniqueModel('next-embed');
    await upload(api, bucketId, 'moving/otters.txt', 'Sea otters hold hands while they sleep.');
    const kb = (
      await api.post('/api/knowledge-bases', {
        name: 'Moving',
        type: 'gtc_pg_vector',
        config: { gtc_pg_vector: {} },
        asset_paths: [`${bucketId}/moving/`],
      })
    ).body;
    expect((await runJob(api, kb.knowledge_base_id)).status).to.equal('SUCCEEDED');
    const patched = await api.patch(`/api/knowledge-bases/${kb.knowledge_base_id}`, {
      embedding_model: `local/${other}`,
    });
    expect(patched.body.config.gtc_pg_vector.embedding_model).to.equal(`local/${other}`);
    const ask = () =>
      api.post(`/api/knowledge-bases/${kb.knowledge_base_id}/query`, {
        query: 'otters sleep',
        query_args: { count: 1 },
      });
    // No chunk has a vector of the new model: the vector ranking is empty, so full text (BM25) answers.
    const meanwhile = (await ask()).body.entries;
    expect(meanwhile.map((e: any) => e.meta.asset_name)).to.deep.equal(['moving/otters.txt']);
    const before = provider.embeddingRequests.filter((r) => r.model === other).length;
    expect((await runJob(api, kb.knowledge_base_id)).status).to.equal('SUCCEEDED');
    expect(provider.embeddingRequests.filter((r) => r.model === other).length).to.be.greaterThan(before);
    const after = (await ask()).body.entries;
    expect(after.map((e: any) => e.meta.asset_name)).to.deep.equal(['moving/otters.txt']);
    const rows = await getStack().ds.query(
      `SELECT embedding_model, embedding IS NOT NULL AS embedded FROM knowledge_base_chunks WHERE knowledge_base_id = $1`,
      [kb.knowledge_base_id],
    );
    expect(rows).to.deep.equal([{ embedding_model: `local/${other}`, embedded: true }]);
  });

  it('retries a rate-limited provider after its Retry-After; a provider that keeps failing is an error of that asset only', async function () {
    this.timeout(90_000);
    const provider = getStack().modelProvider;
    const model = provider.uniqueModel('flaky-embed');
    provider.failEmbeddings(model, {
      status: 429,
      message: 'Rate limit reached for requests',
      times: 2,
      retryAfterSeconds: 1,
    });
    provider.failEmbeddings(model, {
      status: 500,
      message: 'The server is overloaded',
      times: Infinity,
      containing: 'POISON',
    });
    await upload(api, bucketId, 'flaky/good.txt', 'Hummingbirds hover and fly backwards.');
    await upload(api, bucketId, 'flaky/poison.txt', 'POISON text that the provider never embeds.');
    const kb = (
      await api.post('/api/knowledge-bases', {
        name: 'Flaky',
        type: 'gtc_hybrid_sql_pg_vector',
        config: { gtc_hybrid_sql_pg_vector: { embedding_model: `local/${model}` } },
        asset_paths: [`${bucketId}/flaky/`],
      })
    ).body;
    const job = await runJob(api, kb.knowledge_base_id);
    expect(job.status, JSON.stringify(job)).to.equal('SUCCEEDED');
    // good.txt: two 429s, each retried after the second the provider asked for, then embedded.
    const good = provider.embeddingRequests.filter((r) => r.model === model && r.input[0].includes('Humming'));
    expect(good.map((r) => r.status)).to.deep.equal([429, 429, 200]);
    expect(good[1].at - good[0].at).to.be.at.least(900);
    expect(good[2].at - good[1].at).to.be.at.least(900);
    // poison.txt: the first attempt and MODEL_MAX_RETRIES retries, then an entry of errors[].
    const poison = provider.embeddingRequests.filter((r) => r.model === model && r.input[0].includes('POISON'));
    expect(poison.map((r) => r.status)).to.deep.equal(new Array(getStack().config.models.maxRetries + 1).fill(500));
    expect(job.errors).to.have.length(1);
    expect(job.errors[0]).to.deep.include({ type: 'EmbeddingFailed', path: `${bucketId}/flaky/poison.txt` });
    expect(job.errors[0].message).to.include('500');
    // Nothing of the failed asset was written; the other one is queryable.
    const rows: Array<{ asset_path: string; embedded: boolean }> = await getStack().ds.query(
      `SELECT asset_path, embedding IS NOT NULL AS embedded FROM knowledge_base_chunks WHERE knowledge_base_id = $1`,
      [kb.knowledge_base_id],
    );
    expect(rows).to.deep.equal([{ asset_path: `${bucketId}/flaky/good.txt`, embedded: true }]);
    // A re-run once the provider recovered embeds the asset that failed, and only it.
    provider.recoverEmbeddings(model);
    const mark = provider.embeddingRequests.length;
    const again = await runJob(api, kb.knowledge_base_id);
    expect(again.errors).to.deep.equal([]);
    expect(provider.embeddingRequests.slice(mark).map((r) => r.input[0])).to.deep.equal([
      'poison\n\nPOISON text that the provider never embeds.',
    ]);
  });

  it('cancels a running job (its embedding request hangs) and refuses a second open job', async function () {
    this.timeout(60_000);
    const provider = getStack().modelProvider;
    const model = provider.uniqueModel('stall-embed');
    provider.stallEmbeddings(model);
    await upload(api, bucketId, 'slow/one.txt', 'Some words to embed slowly.');
    const kb = (
      await api.post('/api/knowledge-bases', {
        name: 'Slow',
        type: 'gtc_pg_vector',
        config: { gtc_pg_vector: { embedding_model: `local/${model}` } },
        asset_paths: [`${bucketId}/slow/one.txt`],
      })
    ).body;
    expect(kb.config.gtc_pg_vector).to.include({
      embedding_model: `local/${model}`,
      use_default_embedding_model: false,
    });
    const created = await api.post(`/api/knowledge-bases/${kb.knowledge_base_id}/knowledge-base-jobs`);
    const jobId = created.body.knowledge_base_job_id;
    await jobEnd(api, jobId, ['RUNNING']);
    const second = await api.post(`/api/knowledge-bases/${kb.knowledge_base_id}/knowledge-base-jobs`);
    expect(second.status).to.equal(409);
    const deadline = Date.now() + 20_000;
    while (!provider.embeddingRequests.some((r) => r.model === model) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    const cancelled = await api.post(`/api/knowledge-base-jobs/${jobId}/cancel`);
    expect(cancelled.status, cancelled.text).to.equal(200);
    expect(cancelled.body.status).to.equal('CANCELLED');
    expect(cancelled.body.status_detail.requested_by).to.be.a('string');
    expect((await api.post(`/api/knowledge-base-jobs/${jobId}/cancel`)).body.status).to.equal('CANCELLED');
    // A finished job cannot be cancelled.
    await api.patch(`/api/knowledge-bases/${kb.knowledge_base_id}`, { asset_paths: [] });
    const done = await runJob(api, kb.knowledge_base_id);
    expect(done.status).to.equal('SUCCEEDED');
    expect((await api.post(`/api/knowledge-base-jobs/${done.knowledge_base_job_id}/cancel`)).status).to.equal(409);
    expect((await api.delete(`/api/knowledge-bases/${kb.knowledge_base_id}`)).status).to.equal(204);
    expect((await api.get(`/api/knowledge-base-jobs/${jobId}`)).status).to.equal(404);
  });
});
