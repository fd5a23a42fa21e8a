// 7. Retrieval quality, on corpora nobody tuned on (bench/retrieval/corpus.ts): public reference text of this
// machine's packages and toolchains, with questions written from a reader's side, each naming the documents that
// answer it. Settings are chosen on the tuning corpus (coreutils); the held-out ones are only reported.
//
// Per corpus: its documents go to a bucket, and one `gtc_hybrid_sql_pg_vector` knowledge base per local model
// ingests them through an api and a worker configured as `npm start` configures them (the local embedding server
// of test/harness/local-embeddings.ts). Each question is ranked by the worker's own code in every mode
// (rankings.ts: full_text, vector, hybrid over the same chunks), and a document ranks as its best chunk. Beside
// them, in the same run: plain BM25 by a library (rank-bm25, bm25-baseline.ts) over whole documents and over
// 200-word passages. Scores (metrics.ts): recall@5, nDCG@10, MRR@10. On the tuning corpus, fusion variants too.
import fs from 'node:fs';
import { queryTextFor } from '../src/config/local-embeddings';
import { chunkDocument, chunkTextInSlices } from '../src/services/knowledge/documents/chunking';
import { htmlToText } from '../src/services/knowledge/documents/html-text';
import { formatOf } from '../src/services/knowledge/documents/sections';
import { localModelCached, startLocalModelStack } from '../test/harness/local-embeddings';
import { bm25Rankings } from './retrieval/bm25-baseline';
import type { Corpus, Document } from './retrieval/corpus';
import { CORPORA } from './retrieval/corpora';
import { scoreRankings, type Scores } from './retrieval/metrics';
import * as rank from './retrieval/rankings';
import type { BenchContext, HttpAnswer } from './support/context';
import { pgPool } from './support/pg';
import type { BenchReport, Ratio } from './support/stats';
import { table } from './support/stats';

/** Entries asked of each ranking: enough chunks to reach 10 distinct documents. */
const ENTRIES = 50;
const FUSIONS = [10, 30, 60, 100].map(rank.rrf).concat([0.3, 0.5, 0.7].map(rank.weighted));
const FUSION_CANDIDATES = 50;

type Http = (method: string, urlPath: string, body?: unknown) => Promise<HttpAnswer>;

async function waitForJob(http: Http, kbId: string) {
  const job = await http('POST', `/api/knowledge-bases/${kbId}/knowledge-base-jobs`);
  if (job.status !== 202) throw new Error(`job: ${job.status} ${JSON.stringify(job.body)}`);
  for (;;) {
    // A poll may meet a socket the api closed while a long ingestion stalled its event loop: poll again.
    const j = await http('GET', `/api/knowledge-base-jobs/${job.body.knowledge_base_job_id}`).catch(() => ({
      status: 0,
      body: {} as { status?: string; errors?: unknown[] },
    }));
    if (j.body.status === 'SUCCEEDED') return j.body as { errors: unknown[] };
    if (['FAILED', 'CANCELLED'].includes(j.body.status)) throw new Error(`job ended ${JSON.stringify(j.body)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

const httpAt =
  (key: string, baseUrl: string): Http =>
  async (method, urlPath, body) => {
    const res = await fetch(baseUrl + urlPath, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };

async function upload(http: Http, corpus: Corpus, docs: Document[]): Promise<string> {
  const bucket = await http('POST', '/api/buckets', { name: `bench-${corpus.name}` });
  const bucketId: string = bucket.body.bucket_id;
  for (const doc of docs) {
    const asset = `${corpus.name}/${doc.name}.${doc.ext}`;
    await http('PUT', `/api/buckets/${bucketId}/assets`, { name: asset });
    const url = await http('POST', `/api/buckets/${bucketId}/asset-urls/${asset}`, { operation: 'PUT' });
    const put = await fetch(url.body.url, { method: 'PUT', body: doc.text });
    if (put.status !== 200) throw new Error(`upload ${asset}: ${put.status}`);
  }
  return bucketId;
}

async function embedQuestions(embeddingsUrl: string, model: string, questions: string[]): Promise<number[][]> {
  const res = await fetch(`${embeddingsUrl}/embeddings`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, input: questions }),
  });
  if (res.status !== 200) throw new Error(`embeddings: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { data: Array<{ embedding: number[] }> }).data.map((d) => d.embedding);
}

/** Seconds to chunk `texts` by `chunk`, the median of three passes. */
async function chunkingSeconds(texts: string[], chunk: (text: string) => Promise<unknown>): Promise<number> {
  const passes: number[] = [];
  for (let pass = 0; pass < 3; pass++) {
    const started = performance.now();
    for (const text of texts) await chunk(text);
    passes.push((performance.now() - started) / 1000);
  }
  return passes.sort((a, b) => a - b)[1];
}

interface CorpusResult {
  corpus: string;
  role: Corpus['role'];
  documents: number;
  megabytes: number;
  questions: number;
  scores: Record<string, Scores>;
  ingestSeconds: Record<string, number>;
  chunks: Record<string, number>;
  /** MB of extracted text chunked per second: along the structure (ingestion's) and by length only (before). */
  chunkingMbPerSecond: { structure: number; length: number; structureChunks: number; lengthChunks: number };
}

export async function retrievalQuality(ctx: BenchContext): Promise<BenchReport> {
  if (!localModelCached())
    throw new Error('retrieval-quality needs the local models: bash tools/obtain-embedding-model.sh');
  const wanted = ctx.options.corpora;
  const corpora = wanted.length ? CORPORA.filter((c) => wanted.includes(c.name)) : CORPORA;
  if (!corpora.length) throw new Error(`no corpus of ${wanted.join(', ')}; corpora: ${CORPORA.map((c) => c.name)}`);
  const local = await startLocalModelStack();
  const pool = pgPool(ctx.databaseUrl, 'tarmac-bench-quality');
  try {
    const results: CorpusResult[] = [];
    const tables: string[] = [];
    for (const corpus of corpora) {
      const { result, fusion } = await measureCorpus(ctx, local, pool, corpus);
      results.push(result);
      tables.push(corpusTable(result));
      if (fusion) tables.push(fusion);
    }
    tables.unshift(summaryTable(results, ctx.options.models));
    return {
      name: 'retrieval-quality',
      tables,
      ratios: ratiosOf(results, ctx.options.models),
      notes: notesOf(results),
      data: { results },
    };
  } finally {
    await pool.end();
    await local.close();
  }
}

async function measureCorpus(
  ctx: BenchContext,
  local: Awaited<ReturnType<typeof startLocalModelStack>>,
  pool: ReturnType<typeof pgPool>,
  corpus: Corpus,
): Promise<{ result: CorpusResult; fusion?: string }> {
  const docs = await corpus.documents();
  const questions = corpus.questions.map((q) => q.question);
  const http = httpAt(ctx.key, local.baseUrl);
  const bucketId = await upload(http, corpus, docs);
  const plain = docs.map((d) => ({ name: d.name, text: d.ext === 'html' ? htmlToText(d.text) : d.text }));
  const bm25 = await bm25Rankings(plain, questions, 10);
  const plainMb = plain.reduce((n, d) => n + Buffer.byteLength(d.text), 0) / 1e6;
  const byStructure = (d: (typeof plain)[number], i: number) =>
    chunkDocument(d.text, { title: d.name, format: formatOf(`${docs[i].name}.${docs[i].ext}`) });
  const counts = { structure: 0, length: 0 };
  for (const [i, d] of plain.entries()) {
    counts.structure += (await byStructure(d, i)).length;
    counts.length += (await chunkTextInSlices(d.text)).length;
  }
  const structureSeconds = await chunkingSeconds(
    plain.map((_, i) => String(i)),
    (i) => byStructure(plain[Number(i)], Number(i)),
  );
  const lengthSeconds = await chunkingSeconds(
    plain.map((d) => d.text),
    (text) => chunkTextInSlices(text),
  );
  const result: CorpusResult = {
    corpus: corpus.name,
    role: corpus.role,
    documents: docs.length,
    megabytes: docs.reduce((n, d) => n + Buffer.byteLength(d.text), 0) / 1e6,
    questions: questions.length,
    scores: {
      'bm25 documents': scoreRankings(bm25.documents, corpus.questions),
      'bm25 passages': scoreRankings(bm25.passages, corpus.questions),
    },
    ingestSeconds: {},
    chunks: {},
    chunkingMbPerSecond: {
      structure: plainMb / structureSeconds,
      length: plainMb / lengthSeconds,
      structureChunks: counts.structure,
      lengthChunks: counts.length,
    },
  };
  const fusionRows: Array<Array<string | number>> = [];
  const store = rank.poolChunkStore(pool);
  // Each model; and the default one with the former chunking (by length only: the baseline of the chunking)
  // and with parent-child chunks (hybrid only: the mode it is meant for).
  const [first] = ctx.options.models;
  const setups = [
    ...ctx.options.models.map((model) => ({ model, settings: {}, label: model })),
    { model: first, settings: { chunking: 'length' }, label: `${first} length` },
    { model: first, settings: { parent_child: true }, label: `${first} parent-child` },
  ];
  for (const { model, settings, label } of setups) {
    const parentChild = 'parent_child' in settings;
    const created = await http('POST', '/api/knowledge-bases', {
      name: `bench-quality-${corpus.name}-${label}`,
      type: 'gtc_hybrid_sql_pg_vector',
      config: { gtc_hybrid_sql_pg_vector: { embedding_model: `local/${model}`, ...settings } },
      asset_paths: [`${bucketId}/${corpus.name}/`],
    });
    if (created.status !== 201) throw new Error(`create: ${created.status} ${JSON.stringify(created.body)}`);
    const kbId: string = created.body.knowledge_base_id;
    const started = performance.now();
    const job = await waitForJob(http, kbId);
    if (job.errors.length) throw new Error(`${corpus.name}/${label}: ingestion errors ${JSON.stringify(job.errors)}`);
    result.ingestSeconds[label] = (performance.now() - started) / 1000;
    const kb = await rank.knowledgeBaseRow(pool, kbId);
    const chunkDocs = await rank.documentOfChunks(pool, kbId);
    result.chunks[label] = chunkDocs.size;
    const vectors = await embedQuestions(
      local.config.models.providers.local!.baseUrl,
      model,
      questions.map((q) => queryTextFor(`local/${model}`, q)),
    );
    for (const mode of parentChild ? (['hybrid'] as const) : rank.MODES) {
      if (mode === 'full_text' && model !== first) continue; // the same for every model
      const rankings: string[][] = [];
      for (let i = 0; i < questions.length; i++)
        rankings.push(await rank.rankDocuments(store, kb, mode, questions[i], vectors[i], ENTRIES));
      const key = mode === 'full_text' ? label.replace(model, mode) : `${mode} ${label}`;
      result.scores[key] = scoreRankings(rankings, corpus.questions);
    }
    if (corpus.role !== 'tuning' || label !== model) continue;
    const parts = [];
    for (let i = 0; i < questions.length; i++)
      parts.push(await rank.halves(store, kb, questions[i], vectors[i], FUSION_CANDIDATES));
    for (const fusion of FUSIONS) {
      const rankings = parts.map(({ byVector, byText }) => [
        ...new Set(fusion.fuse(byVector, byText, ENTRIES).map((h) => chunkDocs.get(h.chunk_id)!)),
      ]);
      const s = scoreRankings(rankings, corpus.questions);
      fusionRows.push([model, fusion.label, s.recall5, s.ndcg10, s.mrr10]);
    }
  }
  const fusion = fusionRows.length
    ? table(
        `retrieval-quality: fusions of the two halves (${FUSION_CANDIDATES} candidates each) on the tuning corpus ${corpus.name}`,
        ['model', 'fusion', 'recall@5', 'nDCG@10', 'MRR@10'],
        fusionRows.map((r) => r.map(fmt)),
      )
    : undefined;
  return { result, fusion };
}

const fmt = (v: string | number) => (typeof v === 'number' ? v.toFixed(3) : v);

function corpusTable(r: CorpusResult): string {
  const ingest = Object.entries(r.ingestSeconds)
    .map(([m, s]) => `${m} ${r.chunks[m]} chunks in ${s.toFixed(0)} s (${(r.megabytes / s).toFixed(3)} MB/s)`)
    .join('; ');
  const c = r.chunkingMbPerSecond;
  const chunking =
    `chunking ${c.structure.toFixed(2)} MB/s along the structure (${c.structureChunks} chunks), ` +
    `${c.length.toFixed(2)} MB/s by length only (${c.lengthChunks})`;
  return table(
    `retrieval-quality: ${r.corpus} (${r.role}), ${r.questions} questions over ${r.documents} documents, ` +
      `${r.megabytes.toFixed(1)} MB; ingestion: ${ingest}; ${chunking}`,
    ['ranking', 'recall@5', 'nDCG@10', 'MRR@10'],
    Object.entries(r.scores).map(([k, s]) => [k, s.recall5, s.ndcg10, s.mrr10].map(fmt)),
  );
}

function summaryTable(results: CorpusResult[], models: string[]): string {
  const keys = [
    'bm25 documents',
    'bm25 passages',
    'full_text length',
    'full_text',
    `vector ${models[0]} length`,
    `hybrid ${models[0]} length`,
    ...models.flatMap((m) => [`vector ${m}`, `hybrid ${m}`]),
    `hybrid ${models[0]} parent-child`,
  ];
  return table(
    'retrieval-quality: recall@5 / nDCG@10 per corpus',
    ['ranking', ...results.map((r) => `${r.corpus} (${r.role})`)],
    keys.map((k) => [
      k,
      ...results.map((r) => (r.scores[k] ? `${fmt(r.scores[k].recall5)} / ${fmt(r.scores[k].ndcg10)}` : '-')),
    ]),
  );
}

function ratiosOf(results: CorpusResult[], models: string[]): Ratio[] {
  const [first] = models;
  const ratio = (metric: string, ours: number, bare: number, unit = ''): Ratio => ({
    bench: 'retrieval-quality',
    metric,
    ours,
    bare,
    unit,
  });
  return results.flatMap((r) => [
    ratio(
      `${r.corpus}: recall@5 full_text vs rank-bm25 passages`,
      r.scores.full_text.recall5,
      r.scores['bm25 passages'].recall5,
    ),
    ratio(
      `${r.corpus}: recall@5 hybrid ${first} vs rank-bm25 passages`,
      r.scores[`hybrid ${first}`].recall5,
      r.scores['bm25 passages'].recall5,
    ),
    ratio(
      `${r.corpus}: recall@5 hybrid ${first}, chunks along the structure vs by length`,
      r.scores[`hybrid ${first}`].recall5,
      r.scores[`hybrid ${first} length`].recall5,
    ),
    // Seconds per MB: ours (along the structure) over the former chunking's; at most 1 is the goal.
    ratio(
      `${r.corpus}: ingestion s/MB with ${first}, chunks along the structure vs by length`,
      r.ingestSeconds[first] / r.megabytes,
      r.ingestSeconds[`${first} length`] / r.megabytes,
      's/MB',
    ),
  ]);
}

const notesOf = (results: CorpusResult[]) =>
  results.flatMap((r) =>
    Object.entries(r.scores).map(([k, s]) => `${r.corpus} ${k}: missed in top 5: ${s.missed.join(', ') || 'none'}`),
  );

/** For a look at one corpus's documents without the stack: node dist/bench/retrieval-quality.js <corpus>. */
if (require.main === module) {
  const corpus = CORPORA.find((c) => c.name === process.argv[2]) ?? CORPORA[0];
  void corpus.documents().then((docs) => {
    fs.writeSync(1, `${corpus.name}: ${docs.length} documents, ${corpus.questions.length} questions\n`);
  });
}
