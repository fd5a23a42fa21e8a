// Knowledge bases with the offline default embedding model, all-MiniLM-L6-v2, through HTTP: an api and worker
// configured as `npm start` configures them when no other model is set (test/harness/local-embeddings.ts; the
// embedding server is the real one, started from its compiled entry point). A knowledge base asks for no model
// and gets `local/all-minilm-l6-v2`; after ingestion, a question that shares no word with its answer finds it
// in `vector` and `hybrid` mode, which the stack's bag-of-words double and BM25 cannot. Skipped when the model
// is not cached (tools/obtain-embedding-model.sh, which `npm start` runs).
import { expect } from 'chai';
import { as } from '../harness/client';
import { runKnowledgeBaseJob, uploadText } from '../harness/knowledge-bases';
import { localModelCached, startLocalModelStack, type LocalModelStack } from '../harness/local-embeddings';
import { newTenant } from '../harness/stack';

type Api = ReturnType<typeof as>;

const DOCUMENTS: Record<string, string> = {
  'felines.txt': 'Cats are small domesticated carnivores. They purr when content and hunt mice at night.',
  'volcanoes.txt': 'Lava erupts from a mountain when molten rock pressure builds up beneath the crust.',
  'rates.txt': 'The central bank raised interest rates to curb rising inflation across the economy.',
  'bread.txt': 'Knead the dough, let the yeast rise for an hour, then bake it in a hot oven until golden.',
};

async function firstAsset(api: Api, id: string, query: string): Promise<{ names: string[]; body: any }> {
  const res = await api.post(`/api/knowledge-bases/${id}/query`, { query, query_args: { count: 4 } });
  expect(res.status, res.text).to.equal(200);
  return { names: res.body.entries.map((e: any) => e.meta.asset_name as string), body: res.body };
}

describe('knowledge bases with the local embedding model (all-MiniLM-L6-v2)', function () {
  this.timeout(240_000);
  let local: LocalModelStack | undefined;
  let api: Api;
  let bucketId: string;

  before(async function () {
    // npm test obtains the model (tools/obtain-embedding-model.sh); a run by hand without it says so.
    if (!localModelCached())
      throw new Error('the local embedding model is not cached: bash tools/obtain-embedding-model.sh');
    local = await startLocalModelStack();
    api = as((await newTenant('kb-local-model')).key, local.baseUrl);
    bucketId = (await api.post('/api/buckets', { name: 'docs' })).body.bucket_id;
    for (const [name, text] of Object.entries(DOCUMENTS)) await uploadText(api, bucketId, name, text);
  });

  after(async () => {
    await local?.close();
  });

  for (const [type, retrieval] of [
    ['gtc_pg_vector', 'vector'],
    ['gtc_hybrid_sql_pg_vector', 'hybrid'],
  ] as const) {
    it(`${retrieval}: the default model is local/all-minilm-l6-v2 and a question with none of its answer's words finds it`, async () => {
      const kb = await api.post('/api/knowledge-bases', {
        name: `local-${retrieval}`,
        type,
        config: { [type]: {} },
        asset_paths: [`${bucketId}/`],
      });
      expect(kb.status, kb.text).to.equal(201);
      expect(kb.body.retrieval).to.equal(retrieval);
      expect(kb.body.config[type].embedding_model).to.equal('local/all-minilm-l6-v2');
      const id: string = kb.body.knowledge_base_id;
      await runKnowledgeBaseJob(api, id);

      const pet = await firstAsset(api, id, 'Which pet animal meows?');
      expect(pet.names[0], JSON.stringify(pet.names)).to.equal('felines.txt');
      const money = await firstAsset(api, id, 'Why do borrowing costs go up when prices climb?');
      expect(money.names[0], JSON.stringify(money.names)).to.equal('rates.txt');
      const baking = await firstAsset(api, id, 'How long should I leave the yeast to rise?');
      expect(baking.names[0], JSON.stringify(baking.names)).to.equal('bread.txt');
      // The entries are the chunk's text, whole: the answer is readable from the query.
      expect(pet.body.entries[0].meta.content).to.equal(`felines\n\n${DOCUMENTS['felines.txt']}`);
    });
  }
});
