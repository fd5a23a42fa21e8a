// Chunks that follow the document, through HTTP: a Markdown asset's chunks start with its title and section
// path and carry their section's ordinal (`meta.section`), and a `parent_child` knowledge base matches small
// chunks and answers each match's section once, with the neighbouring chunks of that section and no other;
// `chunking: "length"` keeps the former windows of tokens.
import { expect } from 'chai';
import { as } from '../harness/client';
import { runKnowledgeBaseJob, uploadText } from '../harness/knowledge-bases';
import { newTenant } from '../harness/stack';

type Api = ReturnType<typeof as>;

const paragraph = (topic: string, n: number) =>
  `${topic} fact ${n}: ` +
  Array.from({ length: 40 }, (_, i) => `${topic.toLowerCase()}${n}word${i}`).join(' ') +
  `. The ${topic} team confirmed note ${n}.`;

const GUIDE = [
  '# Field guide',
  '## Otters',
  ...[1, 2, 3, 4].map((n) => paragraph('Otters', n)),
  '## Herons',
  ...[1, 2, 3, 4].map((n) => paragraph('Herons', n)),
].join('\n\n');

async function kbOver(api: Api, name: string, path: string, settings: Record<string, unknown>) {
  const kb = await api.post('/api/knowledge-bases', {
    name,
    type: 'gtc_hybrid_sql_pg_vector',
    config: { gtc_hybrid_sql_pg_vector: { use_default_embedding_model: false, ...settings } },
    asset_paths: [path],
  });
  expect(kb.status, kb.text).to.equal(201);
  await runKnowledgeBaseJob(api, kb.body.knowledge_base_id);
  return kb.body;
}

async function query(api: Api, id: string, text: string, count = 10) {
  const res = await api.post(`/api/knowledge-bases/${id}/query`, { query: text, query_args: { count } });
  expect(res.status, res.text).to.equal(200);
  return res.body.entries as Array<{ id: string; meta: Record<string, string> }>;
}

describe('knowledge bases: chunks that follow the document', function () {
  this.timeout(120_000);
  let api: Api;
  let path: string;

  before(async () => {
    api = as((await newTenant('kb-chunking')).key);
    const bucketId = (await api.post('/api/buckets', { name: 'guides' })).body.bucket_id;
    await uploadText(api, bucketId, 'guides/wildlife.md', GUIDE);
    path = `${bucketId}/guides/`;
  });

  it('starts each chunk with the title and heading path, one section per chunk', async () => {
    const kb = await kbOver(api, 'Sections', path, {});
    const [otter] = await query(api, kb.knowledge_base_id, 'otters3word7', 1);
    expect(otter.meta.content.split('\n')[0]).to.equal('wildlife › Field guide › Otters');
    expect(otter.meta.content).to.include('otters3word7').and.not.include('Herons fact');
    const [heron] = await query(api, kb.knowledge_base_id, 'herons2word5', 1);
    expect(heron.meta.content.split('\n')[0]).to.equal('wildlife › Field guide › Herons');
    expect(Number(heron.meta.section)).to.be.greaterThan(Number(otter.meta.section));
    expect(kb.config.gtc_hybrid_sql_pg_vector).to.not.have.property('parent_child');
  });

  it('parent_child: matches a small chunk and answers its whole section, once per section', async () => {
    const kb = await kbOver(api, 'Parents', path, { parent_child: true });
    expect(kb.config.gtc_hybrid_sql_pg_vector.parent_child).to.equal(true);
    // Every paragraph of the Otters section holds "Otters team": several chunks match, one section answers.
    const entries = await query(api, kb.knowledge_base_id, 'otters team confirmed otters1word3', 10);
    const otters = entries.filter((e) => e.meta.content.startsWith('wildlife › Field guide › Otters'));
    expect(otters).to.have.length(1);
    for (const n of [1, 2, 3, 4]) expect(otters[0].meta.content).to.include(`otters${n}word0`);
    expect(otters[0].meta.content).to.not.include('Herons fact');
    // The entry is the best matching chunk (its id and index), with its section's text.
    expect(entries[0]).to.equal(otters[0]);
    const chunk = await query(api, kb.knowledge_base_id, 'otters1word3', 1);
    expect(chunk[0].meta.content).to.equal(otters[0].meta.content);
    // The small chunks: a section of four 45-word paragraphs is several chunks.
    const sections = new Set(entries.map((e) => e.meta.section));
    expect(sections.size).to.equal(entries.length);
    const bad = await api.post('/api/knowledge-bases', {
      name: 'bad',
      type: 'gtc_pg_vector',
      config: { gtc_pg_vector: { parent_child: 'yes' } },
    });
    expect(bad.status, bad.text).to.equal(400);
    const both = await api.post('/api/knowledge-bases', {
      name: 'both',
      type: 'gtc_pg_vector',
      config: { gtc_pg_vector: { parent_child: true, chunking: 'length' } },
    });
    expect(both.status, both.text).to.equal(400);
    expect(both.body.errors[0].message).to.include('chunking "structure"');
  });

  it('chunking "length": the former windows of tokens, no heading line', async () => {
    const kb = await kbOver(api, 'Windows', path, { chunking: 'length' });
    expect(kb.config.gtc_hybrid_sql_pg_vector.chunking).to.equal('length');
    const [otter] = await query(api, kb.knowledge_base_id, 'otters3word7', 1);
    expect(otter.meta.content).to.include('otters3word7').and.not.include('wildlife ›');
    expect(otter.meta).to.not.have.property('section');
  });
});
