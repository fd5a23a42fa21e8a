// Attack: queries made of the words every chunk holds. One organization fills a full-text knowledge base
// (`simple`: no stop words to save it) whose every chunk holds the same twenty words, then asks 10,000
// characters of them, over and over. Before BM25 any word matched and every match was ranked: each query read
// and ranked the whole corpus. Now the rarest words choose at most a postings budget of candidates
// (src/services/knowledge/index/full-text.ts), so such a query costs about what a query of one rare word costs. It
// holds when the common-word query's p50 stays within 5× the rare-word query's (plus a second of slack for
// the loaded machine).
import { as, request } from '../../harness/client';
import { newTenant } from '../../harness/stack';
import { MAX_CANDIDATES, MAX_QUERY_TERMS, POSTINGS_BUDGET } from '../../../src/services/knowledge/index/full-text';
import type { MachineAttack, MachineAttackContext } from './kit';

const COMMON = Array.from({ length: 20 }, (_, i) => `common${String.fromCharCode(97 + i)}`);
const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function commonWordQueries(ctx: MachineAttackContext) {
  const { baseUrl } = ctx.stack;
  const chunks = ctx.quick ? 200 : 1000;
  const samples = ctx.quick ? 5 : 15;
  const tenant = await newTenant('full-text-common');
  const api = as(tenant.key, baseUrl);
  const bucketId = (await api.post('/api/buckets', { name: 'common' })).body.bucket_id;
  // About 200 words a chunk: every one holds every common word, and one rare word each; 100 chunks an asset
  // (the job heartbeats between assets, and chunking one huge asset on a loaded machine outlasts a heartbeat).
  const perAsset = 100;
  for (let a = 0; a * perAsset < chunks; a++) {
    const text = Array.from(
      { length: Math.min(perAsset, chunks - a * perAsset) },
      (_, i) => `${COMMON.join(' ')} `.repeat(10) + `rare${a * perAsset + i}\n\n`,
    ).join('');
    const name = `common/${a}.txt`;
    await api.put(`/api/buckets/${bucketId}/assets`, { name });
    const url = await api.post(`/api/buckets/${bucketId}/asset-urls/${name}`, { operation: 'PUT' });
    await request('PUT', url.body.url, undefined, { raw: text });
  }
  const kb = await api.post('/api/knowledge-bases', {
    name: 'common',
    type: 'gtc_hybrid_sql_pg_vector',
    config: { gtc_hybrid_sql_pg_vector: { use_default_embedding_model: false } },
    asset_paths: [`${bucketId}/common/`],
    language: 'simple',
  });
  if (kb.status !== 201) throw new Error(`creating the knowledge base answered ${kb.status} ${kb.text}`);
  const id = kb.body.knowledge_base_id;
  const job = await api.post(`/api/knowledge-bases/${id}/knowledge-base-jobs`);
  const deadline = Date.now() + 300_000;
  for (;;) {
    // In the in-process stack a long chunking stalls the api's event loop too; a poll that meets the socket the
    // api closed meanwhile polls again.
    const j = await api
      .get(`/api/knowledge-base-jobs/${job.body.knowledge_base_job_id}`)
      .catch(() => ({ body: { status: 'RUNNING' }, text: '' }));
    if (j.body.status === 'SUCCEEDED') break;
    if (['FAILED', 'CANCELLED'].includes(j.body.status) || Date.now() > deadline)
      throw new Error(`the job ended ${j.text}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  const timed = async (query: string) => {
    const started = Date.now();
    const res = await api.post(`/api/knowledge-bases/${id}/query`, { query, query_args: { count: 10 } });
    if (res.status !== 200) throw new Error(`a query answered ${res.status} ${res.text}`);
    return { ms: Date.now() - started, entries: res.body.entries.length as number };
  };
  const flood = `${COMMON.join(' ')} `.repeat(60).slice(0, 10_000);
  const rare: number[] = [];
  const common: number[] = [];
  for (let i = 0; i < samples; i++) {
    rare.push((await timed(`rare${i}`)).ms);
    const c = await timed(flood);
    if (c.entries !== 10) throw new Error(`the common-word query found ${c.entries} entries`);
    common.push(c.ms);
  }
  const [r, c] = [p50(rare), p50(common)];
  ctx.note(`${chunks} chunks: p50 rare word ${r} ms, 10,000 characters of common words ${c} ms`);
  return {
    held: c <= 5 * r + 1000,
    result: `p50 ${c} ms for 10,000 characters of words in every one of ${chunks} chunks vs ${r} ms for one rare word`,
  };
}

export const attacks: MachineAttack[] = [
  {
    name: 'common-word-queries',
    limit: `BM25 candidates: rarest words within ${POSTINGS_BUDGET} postings, ≤ ${MAX_CANDIDATES} scored, ≤ ${MAX_QUERY_TERMS} words`,
    run: commonWordQueries,
  },
];
