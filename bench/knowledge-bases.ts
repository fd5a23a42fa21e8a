// 5. and 6. Knowledge bases. Both use the stack's model provider double (test/harness/model-provider.ts) as a
// deterministic local embedder (a hashed bag of words, 64 dimensions, over HTTP on loopback), so the provider
// costs next to nothing and is the same on both sides.
//
// kb-query: a synthetic corpus of --kb-chunks chunks (pseudo-words drawn from a Zipf-like vocabulary) written
// straight into one knowledge base's rows (tsvector in english, BM25 statistics) with its HNSW index (the ingest
// benchmark measures jobs). Three paths, one query at a time, interleaved: ours end to end (POST
// /api/knowledge-bases/{id}/query, hybrid, count 10: a Temporal workflow that also persists the query); ours
// ranking (the embedding call and rankEntries, the code the worker runs: the BM25 half and the HNSW half, each
// a bounded candidate set, fused, then the entries' rows); and bare HNSW: the same embedding call, a top-10
// pgvector query through the HNSW index at the same ef_search as our vector half, and the SELECT of the
// entries' rows. The goal is ours ranking ≤ 2 × bare HNSW. Also recall@10 of the HNSW path against exact
// search (index scans off), ties counted as hits.
//
// kb-ingest: for each size of --kb-ingest, documents of about 20 chunks each are uploaded; ours: create a job
// and wait for SUCCEEDED (polled every 20 ms); bare: a loop over the same blobs doing the same reads,
// extraction, chunking, embedding calls (64 texts each) and a COPY of each document's rows.
import { randomUUID } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { from as copyFrom } from 'pg-copy-streams';
import { assetBlobKey } from '../src/blobs/keys';
import { chunkText } from '../src/services/knowledge/documents/chunking';
import { extractDocument } from '../src/services/knowledge/documents/extract';
import { hnswEfSearch, rankEntries } from '../src/services/knowledge/retrieval/query';
import { adjustTermStats, fullTextHits, tokenCountSql } from '../src/services/knowledge/index/full-text';
import { localChunkStore } from '../src/services/knowledge/index/chunk-store';
import { KnowledgeBase } from '../src/persistence/entities/knowledge-base';
import { hashedBagOfWords } from '../test/harness/model-provider';
import type { BenchContext } from './support/context';
import { pgPool } from './support/pg';
import { BenchReport, Ratio, sleep, summarize, table } from './support/stats';

const COUNT = 10;
const EMBED_BATCH = 64;

/** A deterministic pseudo-random generator (mulberry32). */
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const VOCABULARY = (() => {
  const r = rng(7);
  const letters = 'abcdefghijklmnoprstuvwz';
  return Array.from({ length: 5000 }, () =>
    Array.from({ length: 3 + Math.floor(r() * 7) }, () => letters[Math.floor(r() * letters.length)]).join(''),
  );
})();

/** `n` words, Zipf-like (word i drawn with weight about 1/(i+1)). */
function words(r: () => number, n: number): string {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(VOCABULARY[Math.floor(Math.pow(VOCABULARY.length, r())) - 1]);
  return out.join(' ');
}

async function embedOverHttp(baseUrl: string, texts: string[]): Promise<number[][]> {
  const res = await fetch(`${baseUrl}/embeddings`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'test-embedding', input: texts, encoding_format: 'float' }),
  });
  const body = (await res.json()) as { data: Array<{ index: number; embedding: number[] }> };
  const out: number[][] = [];
  for (const d of body.data) out[d.index] = d.embedding;
  return out;
}

async function createKb(ctx: BenchContext, name: string, assetPaths: string[]): Promise<string> {
  const kb = await ctx.http('POST', '/api/knowledge-bases', {
    name,
    type: 'gtc_hybrid_sql_pg_vector',
    config: { gtc_hybrid_sql_pg_vector: {} },
    asset_paths: assetPaths,
  });
  if (kb.status !== 201) throw new Error(`create knowledge base: ${kb.status} ${JSON.stringify(kb.body)}`);
  return kb.body.knowledge_base_id;
}

export async function kbQuery(ctx: BenchContext): Promise<BenchReport> {
  const n = ctx.options.kbChunks;
  const pool = pgPool(ctx.databaseUrl, 'tarmac-bench-kb');
  const provider = ctx.stack.modelProvider.baseUrl;
  try {
    const kbId = await createKb(ctx, `bench-query-${n}`, []);
    const r = rng(42);
    const t0 = Date.now();
    for (let done = 0; done < n;) {
      const batch = Math.min(2000, n - done);
      const texts = Array.from({ length: batch }, () => words(r, 60));
      await pool.query(
        `INSERT INTO knowledge_base_chunks
           (knowledge_base_id, asset_path, chunk_index, chunk_id, content_hash, content, meta, embedding, embedding_model,
            tsv, tsv_length)
         SELECT $1, 'bench/doc-' || (t.i / 20), t.i % 20, gen_random_uuid(), md5(t.c), t.c,
                jsonb_build_object('chunk_index', (t.i % 20)::text), t.e::vector, 'local/test-embedding',
                v.tsv, ${tokenCountSql('v.tsv')}
         FROM unnest($2::int[], $3::text[], $4::text[]) AS t(i, c, e)
         CROSS JOIN LATERAL (SELECT to_tsvector('english', t.c) AS tsv) v`,
        [kbId, texts.map((_, i) => done + i), texts, texts.map((t) => JSON.stringify(hashedBagOfWords(t)))],
      );
      done += batch;
    }
    await pool.query(`UPDATE knowledge_bases SET embedding_dimensions = 64 WHERE knowledge_base_id = $1`, [kbId]);
    const store = localChunkStore(ctx.stack.ds);
    await adjustTermStats(store, kbId, 1, 'true');
    const index = `kb_chunks_hnsw_${kbId.replace(/-/g, '')}`;
    const t1 = Date.now();
    await pool.query(
      `CREATE INDEX ${index} ON knowledge_base_chunks USING hnsw ((embedding::vector(64)) vector_cosine_ops)
       WHERE knowledge_base_id = '${kbId}'`,
    );
    await pool.query('ANALYZE knowledge_base_chunks');
    const built = { insertSeconds: (t1 - t0) / 1000, indexSeconds: (Date.now() - t1) / 1000 };

    const qr = rng(99);
    const queries = Array.from({ length: ctx.options.samples * 3 }, () => words(qr, 3));
    const vectorSql = `SELECT chunk_id, 1 - (embedding::vector(64) <=> $1::vector(64)) AS score
       FROM knowledge_base_chunks
       WHERE knowledge_base_id = '${kbId}' AND embedding IS NOT NULL AND embedding_model = $2 AND meta @> $3::jsonb
       ORDER BY embedding::vector(64) <=> $1::vector(64) LIMIT $4`;
    const kb = await ctx.stack.ds.getRepository(KnowledgeBase).findOneByOrFail({ knowledge_base_id: kbId });
    const entryRows = (ids: string[]) =>
      pool.query(
        `SELECT chunk_id, asset_path, content, meta FROM knowledge_base_chunks
         WHERE knowledge_base_id = $1 AND chunk_id = ANY($2::uuid[])`,
        [kbId, ids],
      );
    /** pgvector alone: the top 10 through the HNSW index (ef_search as our vector half's), then their rows. */
    const bare = async (query: string) => {
      const [vector] = await embedOverHttp(provider, [query]);
      const c = await pool.connect();
      let ids: string[];
      try {
        await c.query('BEGIN');
        await c.query(`SET LOCAL hnsw.ef_search = ${hnswEfSearch(50)}`);
        const r = await c.query(vectorSql, [JSON.stringify(vector), 'local/test-embedding', '{}', COUNT]);
        await c.query('COMMIT');
        ids = r.rows.map((h: { chunk_id: string }) => h.chunk_id);
      } finally {
        c.release();
      }
      if (!(await entryRows(ids)).rows.length) throw new Error('bare query found nothing');
    };
    /** Our ranking in this process: the worker's code (embedding call, BM25 + HNSW halves, RRF, rows). */
    const ranking = async (query: string) => {
      const [vector] = await embedOverHttp(provider, [query]);
      const entries = await rankEntries(store, kb, query, { count: COUNT }, vector);
      if (!entries.length) throw new Error('ranking found nothing');
    };
    const fullTextMs: number[] = [];
    const fullTextHalf = async (query: string) => {
      await fullTextHits(store, kb, query, '{}', 50);
    };
    const ours = async (query: string) => {
      const res = await ctx.http('POST', `/api/knowledge-bases/${kbId}/query`, {
        query,
        query_args: { count: COUNT },
      });
      if (res.status !== 200 || !res.body.entries.length) throw new Error(`query: ${res.status}`);
    };
    const timed = async (fn: (q: string) => Promise<void>, q: string) => {
      const s = process.hrtime.bigint();
      await fn(q);
      return Number(process.hrtime.bigint() - s) / 1e6;
    };
    for (const q of queries.slice(0, 5)) {
      await ours(q);
      await ranking(q);
      await bare(q);
    }
    // Interleaved, one at a time, so every path sees the same load.
    const oursMs: number[] = [];
    const rankingMs: number[] = [];
    const bareMs: number[] = [];
    for (const q of queries) {
      oursMs.push(await timed(ours, q));
      rankingMs.push(await timed(ranking, q));
      bareMs.push(await timed(bare, q));
      fullTextMs.push(await timed(fullTextHalf, q));
    }

    // Recall@10 of the HNSW path against exact search (the same ORDER BY with index scans off): at pgvector's
    // default ef_search (40), at ours for the hybrid path's 50 candidates (query.ts), and a few more for the curve.
    const oursEf = hnswEfSearch(50);
    const efs = [...new Set([40, 100, 200, 400, oursEf])].sort((a, b) => a - b);
    const hits = new Map(efs.map((ef) => [ef, 0]));
    const recallQueries = queries.slice(0, Math.min(50, queries.length));
    const client = await pool.connect();
    try {
      for (const q of recallQueries) {
        const vector = JSON.stringify(hashedBagOfWords(q));
        const args = [vector, 'local/test-embedding', '{}', COUNT];
        const approx = new Map<number, Array<{ score: number }>>();
        for (const ef of efs) {
          await client.query('BEGIN');
          await client.query(`SET LOCAL hnsw.ef_search = ${ef}`);
          approx.set(ef, (await client.query(vectorSql, args)).rows);
          await client.query('COMMIT');
        }
        await client.query('BEGIN');
        await client.query('SET LOCAL enable_indexscan = off');
        await client.query('SET LOCAL enable_bitmapscan = off');
        const exact = (await client.query(vectorSql, args)).rows as Array<{ score: number }>;
        await client.query('COMMIT');
        const threshold = Number(exact[exact.length - 1].score) - 1e-9;
        for (const ef of efs)
          hits.set(ef, hits.get(ef)! + approx.get(ef)!.filter((h) => Number(h.score) >= threshold).length);
      }
    } finally {
      client.release();
    }
    const recallAt = (ef: number) => hits.get(ef)! / (recallQueries.length * COUNT);
    const recall = recallAt(oursEf);
    const recallDefault = recallAt(40);

    const o = summarize(oursMs);
    const rk = summarize(rankingMs);
    const ft = summarize(fullTextMs);
    const b = summarize(bareMs);
    const ratios: Ratio[] = [
      {
        bench: 'kb-query',
        metric: `hybrid ranking p50 at ${n} chunks vs bare HNSW`,
        ours: rk.p50,
        bare: b.p50,
        unit: 'ms',
      },
      {
        bench: 'kb-query',
        metric: `hybrid ranking p99 at ${n} chunks vs bare HNSW`,
        ours: rk.p99,
        bare: b.p99,
        unit: 'ms',
      },
      { bench: 'kb-query', metric: `api query p50 at ${n} chunks vs bare HNSW`, ours: o.p50, bare: b.p50, unit: 'ms' },
    ];
    return {
      name: 'kb-query',
      tables: [
        table(
          `kb-query: hybrid query (count ${COUNT}) over ${n} chunks, ${queries.length} queries each, one at a time`,
          ['path', 'p50 ms', 'p99 ms', 'mean ms', 'max ms'],
          [
            ['ours: POST /api/knowledge-bases/{id}/query', o.p50, o.p99, o.mean, o.max],
            ['ours: embed + rankEntries (BM25 + HNSW, RRF, rows)', rk.p50, rk.p99, rk.mean, rk.max],
            ['  of which the BM25 half alone (50 candidates)', ft.p50, ft.p99, ft.mean, ft.max],
            ['bare: embed + HNSW top-10 (pg) + rows', b.p50, b.p99, b.mean, b.max],
          ],
        ),
        table(
          'kb-query: HNSW against exact search (recall@10 by hnsw.ef_search)',
          [
            'chunks',
            'queries',
            ...efs.map((ef) => `ef ${ef}${ef === oursEf ? ' (ours)' : ''}`),
            'insert s',
            'HNSW build s',
          ],
          [
            [
              String(n),
              String(recallQueries.length),
              ...efs.map((ef) => recallAt(ef).toFixed(3)),
              built.insertSeconds,
              built.indexSeconds,
            ],
          ],
        ),
      ],
      ratios,
      notes: [
        `recall@10 of HNSW = ${recall.toFixed(3)} at our ef_search ${oursEf} (${recallDefault.toFixed(3)} at the default 40)`,
        'ours runs the query as a Temporal workflow in the worker and persists it; bare does neither',
      ],
      data: {
        chunks: n,
        ours: o,
        ranking: rk,
        fullText: ft,
        bare: b,
        recall,
        recallDefault,
        recallByEf: Object.fromEntries(efs.map((ef) => [ef, recallAt(ef)])),
        ...built,
      },
    };
  } finally {
    await pool.end();
  }
}

/** COPY text format: backslash, tab, newline and carriage return escaped; null as \N. */
const copyField = (v: string | null) =>
  v === null ? '\\N' : v.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r');

async function uploadCorpus(ctx: BenchContext, chunks: number, seed: number) {
  const bucket = await ctx.http('POST', '/api/buckets', { name: `bench-ingest-${chunks}-${seed}` });
  const bucketId: string = bucket.body.bucket_id;
  const r = rng(seed);
  const sample = words(r, 3000);
  const perDoc = chunkText(sample).length;
  const docs = Math.max(1, Math.round(chunks / perDoc));
  let bytes = 0;
  for (let d = 0; d < docs; d++) {
    const name = `doc-${String(d).padStart(5, '0')}.txt`;
    const text = d === 0 ? sample : words(r, 3000);
    bytes += Buffer.byteLength(text);
    await ctx.http('PUT', `/api/buckets/${bucketId}/assets`, { name });
    const url = await ctx.http('POST', `/api/buckets/${bucketId}/asset-urls/${name}`, { operation: 'PUT' });
    const put = await fetch(url.body.url, { method: 'PUT', body: text });
    if (put.status !== 200) throw new Error(`upload ${name}: ${put.status}`);
  }
  return { bucketId, docs, bytes };
}

export async function kbIngest(ctx: BenchContext): Promise<BenchReport> {
  const pool = pgPool(ctx.databaseUrl, 'tarmac-bench-kb-ingest');
  const provider = ctx.stack.modelProvider.baseUrl;
  const blobs = ctx.stack.activityDeps.blobs;
  const rows: Array<Array<string | number>> = [];
  const ratios: Ratio[] = [];
  const data: Record<string, unknown> = {};
  try {
    for (const size of ctx.options.kbIngest) {
      const { bucketId, docs, bytes } = await uploadCorpus(ctx, size, size);
      // Ours: job create → SUCCEEDED.
      const kbId = await createKb(ctx, `bench-ingest-${size}`, [`${bucketId}/`]);
      const t0 = Date.now();
      const created = await ctx.http('POST', `/api/knowledge-bases/${kbId}/knowledge-base-jobs`);
      let job = created.body;
      while (['QUEUED', 'RUNNING'].includes(job.status)) {
        await sleep(20);
        job = (await ctx.http('GET', `/api/knowledge-base-jobs/${job.knowledge_base_job_id}`)).body;
      }
      const oursSeconds = (Date.now() - t0) / 1000;
      if (job.status !== 'SUCCEEDED') throw new Error(`job ${job.status}: ${JSON.stringify(job.status_detail)}`);
      const oursChunks: number = job.status_detail.stats.chunks;

      // Bare: the same reads, extraction, chunking and embedding calls, and a COPY per document.
      const bareKb = await createKb(ctx, `bench-ingest-bare-${size}`, []);
      const names: Array<{ name: string }> = (
        await pool.query(`SELECT name FROM assets WHERE bucket_id = $1 ORDER BY name`, [bucketId])
      ).rows;
      const t1 = Date.now();
      let bareChunks = 0;
      for (const { name } of names) {
        const blob = (await blobs.get(assetBlobKey(bucketId, name)))!;
        const doc = await extractDocument(name, blob.stream);
        const chunks = chunkText(doc.text);
        const vectors: number[][] = [];
        for (let i = 0; i < chunks.length; i += EMBED_BATCH)
          vectors.push(
            ...(await embedOverHttp(
              provider,
              chunks.slice(i, i + EMBED_BATCH).map((c) => c.content),
            )),
          );
        const path = `${bucketId}/${name}`;
        const lines = chunks.map(
          (c, i) =>
            [
              bareKb,
              path,
              String(c.index),
              randomUUID(),
              c.hash,
              c.content,
              JSON.stringify({ ...doc.meta, asset_path: path, chunk_index: String(c.index) }),
              JSON.stringify(vectors[i]),
              'local/test-embedding',
            ]
              .map(copyField)
              .join('\t') + '\n',
        );
        const client = await pool.connect();
        try {
          await pipeline(
            Readable.from(lines),
            client.query(
              copyFrom(`COPY knowledge_base_chunks (knowledge_base_id, asset_path, chunk_index, chunk_id,
                content_hash, content, meta, embedding, embedding_model) FROM STDIN`),
            ),
          );
        } finally {
          client.release();
        }
        bareChunks += chunks.length;
      }
      const bareSeconds = (Date.now() - t1) / 1000;
      const oursRate = oursChunks / oursSeconds;
      const bareRate = bareChunks / bareSeconds;
      rows.push([
        String(oursChunks),
        String(docs),
        (bytes / 2 ** 20).toFixed(1),
        oursRate,
        bareRate,
        (oursSeconds / oursChunks) * 1e6,
        (bareSeconds / bareChunks) * 1e6,
      ]);
      ratios.push({
        bench: 'kb-ingest',
        metric: `chunks/s at ${oursChunks} chunks`,
        ours: oursRate,
        bare: bareRate,
        unit: 'chunks/s',
      });
      data[String(size)] = { oursChunks, bareChunks, docs, bytes, oursSeconds, bareSeconds };
    }
    return {
      name: 'kb-ingest',
      tables: [
        table(
          'kb-ingest: ours (job create → SUCCEEDED) against a bare loop (read, extract, chunk, embed, COPY)',
          ['chunks', 'docs', 'MiB', 'ours chunks/s', 'bare chunks/s', 'ours µs/chunk', 'bare µs/chunk'],
          rows,
        ),
      ],
      ratios,
      notes: ['ratio above 1: ours ingests more chunks per second; the per-chunk columns show whether cost stays flat'],
      data,
    };
  } finally {
    await pool.end();
  }
}
