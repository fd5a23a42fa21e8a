// BM25 full text through HTTP (src/services/knowledge/index/full-text.ts): a text search configuration per knowledge
// base (`language`: english stems and drops stop words, simple does neither; fixed once created), BM25 order
// (a rare word outweighs a common one where ts_rank_cd ranked by how many query words a chunk holds), the
// chunks holding all rare words first and any of them only when those are fewer than asked, statistics
// corrected when an asset goes; and the two fixes: `use_default_embedding_model: false` without a model is a
// full-text-only knowledge base, and a retriever or assistant naming a deleted knowledge base says so.
import { expect } from 'chai';
import { as } from '../harness/client';
import { runKnowledgeBaseJob, uploadText } from '../harness/knowledge-bases';
import { getStack, newTenant } from '../harness/stack';

type Api = ReturnType<typeof as>;

/** A full-text-only knowledge base over `paths` (no embedding model asked), its first job done. */
async function fullTextKb(api: Api, name: string, paths: string[], language?: string): Promise<any> {
  const kb = await api.post('/api/knowledge-bases', {
    name,
    type: 'gtc_hybrid_sql_pg_vector',
    config: { gtc_hybrid_sql_pg_vector: { use_default_embedding_model: false } },
    asset_paths: paths,
    ...(language ? { language } : {}),
  });
  expect(kb.status, kb.text).to.equal(201);
  await runKnowledgeBaseJob(api, kb.body.knowledge_base_id);
  return kb.body;
}

async function query(api: Api, id: string, text: string, count = 10): Promise<Array<{ name: string; score: number }>> {
  const res = await api.post(`/api/knowledge-bases/${id}/query`, { query: text, query_args: { count } });
  expect(res.status, res.text).to.equal(200);
  return res.body.entries.map((e: any) => ({ name: e.meta.asset_name as string, score: e.score as number }));
}

const names = (entries: Array<{ name: string }>) => entries.map((e) => e.name);

describe('knowledge base full text (BM25)', function () {
  this.timeout(120_000);
  let api: Api;
  let bucketId: string;

  before(async () => {
    api = as((await newTenant('kb-full-text')).key);
    bucketId = (await api.post('/api/buckets', { name: 'docs' })).body.bucket_id;
  });

  it('language: english by default, simple on request, another is a 400, and it cannot change (409)', async () => {
    const bad = await api.post('/api/knowledge-bases', {
      name: 'x',
      type: 'gtc_pg_vector',
      config: { gtc_pg_vector: {} },
      language: 'klingon',
    });
    expect(bad.status, bad.text).to.equal(400);
    const simple = await api.post('/api/knowledge-bases', {
      name: 'x',
      type: 'gtc_pg_vector',
      config: { gtc_pg_vector: {} },
      language: 'simple',
    });
    expect(simple.body.language).to.equal('simple');
    const patch = await api.patch(`/api/knowledge-bases/${simple.body.knowledge_base_id}`, { language: 'german' });
    expect(patch.status, patch.text).to.equal(409);
    expect(patch.body.errors[0].message).to.match(/language cannot change from simple to german/);
    const same = await api.patch(`/api/knowledge-bases/${simple.body.knowledge_base_id}`, { language: 'simple' });
    expect(same.status, same.text).to.equal(200);
  });

  it('use_default_embedding_model false without a model: full text only, said on the record; the default is hybrid', async () => {
    await uploadText(api, bucketId, 'fix/one.txt', 'Glaciers carve valleys.');
    const kb = await fullTextKb(api, 'No vectors', [`${bucketId}/fix/`]);
    expect(kb).to.include({ retrieval: 'full_text', embedding_dimensions: null, language: 'english' });
    expect(kb.config.gtc_hybrid_sql_pg_vector).to.include({ embedding_model: '', use_default_embedding_model: false });
    expect(names(await query(api, kb.knowledge_base_id, 'glacier'))).to.deep.equal(['fix/one.txt']);
    const withModel = await api.post('/api/knowledge-bases', {
      name: 'Default',
      type: 'gtc_hybrid_sql_pg_vector',
      config: { gtc_hybrid_sql_pg_vector: {} },
    });
    expect(withModel.body).to.include({ retrieval: 'hybrid' });
  });

  it('english stems and drops stop words; simple does neither', async () => {
    await uploadText(
      api,
      bucketId,
      'stem/accounts.txt',
      'Resetting passwords: administrators handle resets within minutes.',
    );
    await uploadText(api, bucketId, 'stem/chatter.txt', 'How do I do it? What is it that they have been doing there?');
    const english = await fullTextKb(api, 'English', [`${bucketId}/stem/`]);
    const simple = await fullTextKb(api, 'Simple', [`${bucketId}/stem/`], 'simple');
    // "reset" and "password" meet "Resetting" and "passwords"; "how do I ... the" are stop words.
    expect(names(await query(api, english.knowledge_base_id, 'How do I reset the password?'))).to.deep.equal([
      'stem/accounts.txt',
    ]);
    // Without stemming nothing holds "reset" or "password": only the chatter's common words match.
    expect(names(await query(api, simple.knowledge_base_id, 'How do I reset the password?'))).to.deep.equal([
      'stem/chatter.txt',
    ]);
    // A query of stop words only matches nothing in english.
    expect(await query(api, english.knowledge_base_id, 'how do they have it')).to.deep.equal([]);
  });

  it('ranks by BM25: a rare word outweighs a common one repeated (ts_rank_cd put the common one first)', async () => {
    const corpus: Record<string, string> = {
      'bm25/a.txt': 'server server server server: the server restarts the server when the server stalls',
      'bm25/b.txt': 'server configuration lives in one file per server',
      'bm25/c.txt': 'each server logs to its own server log',
      'bm25/d.txt': 'a server may run many workers',
      'bm25/latency.txt': 'latency budget: ninety milliseconds at the median',
    };
    for (const [name, text] of Object.entries(corpus)) await uploadText(api, bucketId, name, text);
    const kb = await fullTextKb(api, 'BM25', [`${bucketId}/bm25/`], 'simple');
    const ranked = names(await query(api, kb.knowledge_base_id, 'server latency'));
    expect(ranked[0]).to.equal('bm25/latency.txt');
    // Saturating term frequency and length normalization: the chunk saying "server" seven times is not far ahead.
    expect(ranked).to.have.length(5);
    // The former ranking (ts_rank_cd over any word), computed over the same chunks, put a server chunk first.
    const [former] = await getStack().ds.query(
      `SELECT c.meta->>'asset_name' AS name FROM knowledge_base_chunks c
       WHERE c.knowledge_base_id = $1 AND c.tsv @@ to_tsquery('simple', 'server | latency')
       ORDER BY ts_rank_cd(c.tsv, to_tsquery('simple', 'server | latency')) DESC LIMIT 1`,
      [kb.knowledge_base_id],
    );
    expect(former.name).to.equal('bm25/a.txt');
  });

  it('chunks holding every rare word come first; any of them only when those are fewer than asked', async () => {
    await uploadText(api, bucketId, 'and/both.txt', 'The fjord has a lighthouse.');
    await uploadText(api, bucketId, 'and/fjord.txt', 'fjord fjord fjord fjord fjord, a fjord among fjords.');
    await uploadText(api, bucketId, 'and/lighthouse.txt', 'A lighthouse keeper.');
    const kb = await fullTextKb(api, 'AND then OR', [`${bucketId}/and/`]);
    expect(names(await query(api, kb.knowledge_base_id, 'fjord lighthouse', 1))).to.deep.equal(['and/both.txt']);
    const three = names(await query(api, kb.knowledge_base_id, 'fjord lighthouse', 3));
    expect(three[0]).to.equal('and/both.txt');
    expect([...three].sort()).to.deep.equal(['and/both.txt', 'and/fjord.txt', 'and/lighthouse.txt']);
  });

  it('corrects the statistics when an asset is deleted: scores equal those of a knowledge base without it', async () => {
    await uploadText(api, bucketId, 'stats/keep.txt', 'Volcanoes erupt lava; lava cools into basalt.');
    await uploadText(api, bucketId, 'stats/gone.txt', 'Lava lamps hold wax, not lava. Basalt is not involved.');
    const both = await fullTextKb(api, 'Both', [`${bucketId}/stats/`]);
    const before = await query(api, both.knowledge_base_id, 'lava basalt');
    expect(names(before).sort()).to.deep.equal(['stats/gone.txt', 'stats/keep.txt']);
    expect((await api.delete(`/api/buckets/${bucketId}/assets/stats/gone.txt`)).status).to.equal(204);
    await runKnowledgeBaseJob(api, both.knowledge_base_id);
    const after = await query(api, both.knowledge_base_id, 'lava basalt');
    const alone = await fullTextKb(api, 'Alone', [`${bucketId}/stats/keep.txt`]);
    const expected = await query(api, alone.knowledge_base_id, 'lava basalt');
    expect(names(after)).to.deep.equal(['stats/keep.txt']);
    expect(after[0].score).to.be.closeTo(expected[0].score, 1e-9);
    // The document frequencies changed: the same chunk scored otherwise beside the deleted one.
    expect(after[0].score).to.not.be.closeTo(before.find((e) => e.name === 'stats/keep.txt')!.score, 1e-6);
  });

  it('a deleted knowledge base leaves no assistant or inline component naming it; a standalone component: a 409 naming it', async () => {
    await uploadText(api, bucketId, 'gone/x.txt', 'Ephemeral text.');
    const kb = await fullTextKb(api, 'Soon gone', [`${bucketId}/gone/`]);
    const id = kb.knowledge_base_id as string;
    const retriever = await api.post('/api/retrievers', {
      name: 'r',
      retriever_components: [{ name: 'doomed', type: 'knowledge_base', config: { knowledge_base_id: id } }],
    });
    expect(retriever.status, retriever.text).to.equal(201);
    const component = await api.post('/api/retriever-components', {
      name: 'standalone',
      type: 'knowledge_base',
      config: { knowledge_base_id: id },
    });
    expect(component.status, component.text).to.equal(201);
    const named = await api.post('/api/retrievers', {
      name: 'by id',
      retriever_component_ids: [component.body.retriever_component_id],
    });
    expect(named.status, named.text).to.equal(201);
    const assistant = await api.post('/api/assistants', { name: 'a', knowledge_base_ids: [id] });
    expect(assistant.status, assistant.text).to.equal(201);
    expect((await api.delete(`/api/knowledge-bases/${id}`)).status).to.equal(204);

    // The inline component and the assistant's id went with the knowledge base (its delete's transaction).
    const inline = await api.get(`/api/retrievers/${retriever.body.retriever_id}`);
    expect(inline.body.retriever_components).to.deep.equal([]);
    expect((await api.get(`/api/assistants/${assistant.body.assistant_id}`)).body.knowledge_base_ids).to.deep.equal([]);
    const run = await api.post(`/api/assistants/${assistant.body.assistant_id}/runs`, { input: 'hi' });
    expect(run.status, run.text).to.equal(201);
    expect(run.body.knowledge_base_ids).to.deep.equal([]);
    await api.post(`/api/assistant-runs/${run.body.assistant_run_id}/cancel`);

    // A standalone component is a record of its own: a query through it names the knowledge base and the component.
    const q = await api.post(`/api/retrievers/${named.body.retriever_id}/query`, { query: 'ephemeral' });
    expect(q.status, q.text).to.equal(409);
    expect(q.body.type).to.equal('ConflictError');
    expect(q.body.errors[0].message).to.include(id).and.include('"standalone"');
  });
});
