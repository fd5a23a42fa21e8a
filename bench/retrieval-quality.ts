// 7. Retrieval quality. The corpus: the manual pages of GNU coreutils as Debian's `coreutils` package ships
// them (/usr/share/man/man1, rendered by `man`; one document per page, duplicates by symlink dropped): public
// reference text no one here wrote. The questions (bench/retrieval/coreutils-questions.ts) are a reader's, each
// with the pages that answer it. For each question: the rank of the first answering page among the pages of
// the ranked entries (a page's rank is that of its best chunk), for
//   - a plain document-level BM25 baseline computed by a library (PyPI rank-bm25, BM25Okapi over whole pages,
//     lowercased word tokens, no stemming or stop words), in a venv of test/harness/python-venv.ts;
//   - the former ranking (ts_rank_cd over a `simple` tsvector, any word matching), over the same chunks;
//   - our `full_text`, `vector` and `hybrid` knowledge bases over the same pages, through POST .../query.
// recall@5: the share of questions answered in the top 5 pages; MRR: the mean of 1 / that rank (0 past 10).
// `vector` and `hybrid` use the local default model (all-MiniLM-L6-v2, through an api and worker configured as
// `npm start` configures them, test/harness/local-embeddings.ts) when it is cached (tools/obtain-embedding-model.sh),
// else the stack's hashed bag-of-words double; the table names the model.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { localModelCached, startLocalModelStack } from '../test/harness/local-embeddings';
import { pythonVenv } from '../test/harness/python-venv';
import type { BenchContext, HttpAnswer } from './support/context';
import { pgPool } from './support/pg';
import type { BenchReport, Ratio } from './support/stats';
import { table } from './support/stats';
import { QUESTIONS, type Question } from './retrieval/coreutils-questions';

const run = promisify(execFile);
const ENTRIES = 50;
const BM25_REQUIREMENTS = ['rank-bm25==0.2.2', 'numpy==2.2.6'];

/** Page name → its text, rendered by man(1) from the coreutils package's manual pages. */
async function coreutilsPages(): Promise<Map<string, string>> {
  const { stdout } = await run('dpkg', ['-L', 'coreutils']);
  const files = stdout.split('\n').filter((f) => /\/man1\/[a-z0-9]+\.1\.gz$/.test(f));
  const seen = new Set<string>();
  const pages = new Map<string, string>();
  for (const file of files.sort()) {
    const real = fs.realpathSync(file);
    if (seen.has(real)) continue;
    seen.add(real);
    const rendered = await run('man', ['-l', '-P', 'cat', real], { env: { ...process.env, MANWIDTH: '100' } });
    pages.set(path.basename(file).replace(/\.1\.gz$/, ''), rendered.stdout);
  }
  if (pages.size < 50) throw new Error(`coreutils manual pages: only ${pages.size} found (is man-db installed?)`);
  return pages;
}

const BM25_SCRIPT = `
import json, re, sys
from rank_bm25 import BM25Okapi
data = json.load(sys.stdin)
names = list(data["docs"].keys())
tok = lambda t: re.findall(r"\\w+", t.lower())
bm25 = BM25Okapi([tok(data["docs"][n]) for n in names])
out = []
for q in data["questions"]:
    scores = bm25.get_scores(tok(q))
    out.append([names[i] for i in sorted(range(len(names)), key=lambda i: -scores[i])[:${ENTRIES}]])
print(json.dumps(out))
`;

async function bm25Baseline(pages: Map<string, string>, questions: Question[]): Promise<string[][]> {
  const python = await pythonVenv('bm25', BM25_REQUIREMENTS);
  const child = execFile(python, ['-c', BM25_SCRIPT], { maxBuffer: 64 * 1024 * 1024 });
  const out = new Promise<string>((resolve, reject) => {
    let text = '';
    child.stdout!.on('data', (d) => (text += d));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`rank-bm25 exited ${code}`))));
  });
  child.stdin!.end(JSON.stringify({ docs: Object.fromEntries(pages), questions: questions.map((q) => q.question) }));
  return JSON.parse(await out) as string[][];
}

/** Distinct page names in the order of their best entry. */
const pagesOf = (assetNames: string[]) => [...new Set(assetNames.map((n) => n.replace(/^man1\/|\.txt$/g, '')))];

function score(rankings: string[][], questions: Question[]) {
  let hits = 0;
  let reciprocal = 0;
  const missed: string[] = [];
  rankings.forEach((ranking, i) => {
    const rank = ranking.findIndex((p) => questions[i].expected.includes(p)) + 1;
    if (rank >= 1 && rank <= 5) hits++;
    else missed.push(questions[i].expected[0]);
    if (rank >= 1 && rank <= 10) reciprocal += 1 / rank;
  });
  return { recall5: hits / questions.length, mrr: reciprocal / questions.length, missed };
}

async function waitForJob(http: BenchContext['http'], kbId: string) {
  const job = await http('POST', `/api/knowledge-bases/${kbId}/knowledge-base-jobs`);
  if (job.status !== 202) throw new Error(`job: ${job.status} ${JSON.stringify(job.body)}`);
  for (;;) {
    // A poll may meet a socket the api closed while a long ingestion stalled its event loop: poll again.
    const j = await http('GET', `/api/knowledge-base-jobs/${job.body.knowledge_base_job_id}`).catch(() => ({
      status: 0,
      body: {} as { status?: string },
    }));
    if (j.body.status === 'SUCCEEDED') return;
    if (['FAILED', 'CANCELLED'].includes(j.body.status)) throw new Error(`job ended ${JSON.stringify(j.body)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** ctx.http, but through the api at `baseUrl`. */
const httpAt =
  (ctx: BenchContext, baseUrl: string) =>
  async (method: string, urlPath: string, body?: unknown): Promise<HttpAnswer> => {
    const res = await fetch(baseUrl + urlPath, {
      method,
      headers: {
        authorization: `Bearer ${ctx.key}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };

export async function retrievalQuality(ctx: BenchContext): Promise<BenchReport> {
  if (!localModelCached()) {
    console.warn(
      'retrieval-quality: the local model is not cached (tools/obtain-embedding-model.sh): the stack double embeds',
    );
    return measure(ctx, ctx.http);
  }
  const local = await startLocalModelStack();
  try {
    return await measure(ctx, httpAt(ctx, local.baseUrl));
  } finally {
    await local.close();
  }
}

async function measure(ctx: BenchContext, http: BenchContext['http']): Promise<BenchReport> {
  const pages = await coreutilsPages();
  const bucket = await ctx.http('POST', '/api/buckets', { name: 'bench-coreutils' });
  const bucketId: string = bucket.body.bucket_id;
  for (const [name, text] of pages) {
    const asset = `man1/${name}.txt`;
    await ctx.http('PUT', `/api/buckets/${bucketId}/assets`, { name: asset });
    const url = await ctx.http('POST', `/api/buckets/${bucketId}/asset-urls/${asset}`, { operation: 'PUT' });
    const put = await fetch(url.body.url, { method: 'PUT', body: text });
    if (put.status !== 200) throw new Error(`upload ${asset}: ${put.status}`);
  }
  const kinds = [
    { label: 'full_text', type: 'gtc_hybrid_sql_pg_vector', settings: { use_default_embedding_model: false } },
    { label: 'vector', type: 'gtc_pg_vector', settings: {} },
    { label: 'hybrid', type: 'gtc_hybrid_sql_pg_vector', settings: {} },
  ];
  const rows: Array<Array<string | number>> = [];
  const results: Record<string, ReturnType<typeof score>> = {};
  const baseline = score(await bm25Baseline(pages, QUESTIONS), QUESTIONS);
  results['bm25 (rank-bm25)'] = baseline;
  rows.push(['plain BM25, whole pages (rank-bm25 BM25Okapi)', '-', baseline.recall5, baseline.mrr]);
  let fullTextKb = '';
  for (const kind of kinds) {
    const kb = await http('POST', '/api/knowledge-bases', {
      name: `bench-quality-${kind.label}`,
      type: kind.type,
      config: { [kind.type]: kind.settings },
      asset_paths: [`${bucketId}/man1/`],
    });
    if (kb.status !== 201) throw new Error(`create: ${kb.status} ${JSON.stringify(kb.body)}`);
    const id: string = kb.body.knowledge_base_id;
    if (kb.body.retrieval !== kind.label) throw new Error(`${kind.label}: retrieval is ${kb.body.retrieval}`);
    await waitForJob(http, id);
    if (kind.label === 'full_text') fullTextKb = id;
    const rankings: string[][] = [];
    for (const q of QUESTIONS) {
      const res = await http('POST', `/api/knowledge-bases/${id}/query`, {
        query: q.question,
        query_args: { count: ENTRIES },
      });
      if (res.status !== 200) throw new Error(`query: ${res.status} ${JSON.stringify(res.body)}`);
      rankings.push(pagesOf(res.body.entries.map((e: { meta: { asset_name: string } }) => e.meta.asset_name)));
    }
    results[kind.label] = score(rankings, QUESTIONS);
    rows.push([
      `ours: ${kind.label}`,
      kb.body.config[kind.type].embedding_model || '-',
      results[kind.label].recall5,
      results[kind.label].mrr,
    ]);
  }
  // The former full-text ranking over the same chunks, for comparison.
  const pool = pgPool(ctx.databaseUrl, 'tarmac-bench-quality');
  try {
    const former: string[][] = [];
    for (const q of QUESTIONS) {
      const r = await pool.query(
        `WITH q AS (SELECT replace(plainto_tsquery('simple', $2)::text, ' & ', ' | ')::tsquery AS tsq)
         SELECT c.meta->>'asset_name' AS name FROM knowledge_base_chunks c, q
         WHERE c.knowledge_base_id = $1 AND to_tsvector('simple', c.content) @@ q.tsq
         ORDER BY ts_rank_cd(to_tsvector('simple', c.content), q.tsq) DESC, c.chunk_id LIMIT ${ENTRIES}`,
        [fullTextKb, q.question],
      );
      former.push(pagesOf(r.rows.map((x: { name: string }) => x.name)));
    }
    results['former ts_rank_cd'] = score(former, QUESTIONS);
    rows.splice(1, 0, [
      'former: ts_rank_cd, simple, any word (same chunks)',
      '-',
      results['former ts_rank_cd'].recall5,
      results['former ts_rank_cd'].mrr,
    ]);
  } finally {
    await pool.end();
  }
  const ratios: Ratio[] = [
    {
      bench: 'retrieval-quality',
      metric: 'recall@5 full_text vs plain BM25',
      ours: results.full_text.recall5,
      bare: baseline.recall5,
      unit: '',
    },
    {
      bench: 'retrieval-quality',
      metric: 'MRR full_text vs plain BM25',
      ours: results.full_text.mrr,
      bare: baseline.mrr,
      unit: '',
    },
  ];
  return {
    name: 'retrieval-quality',
    tables: [
      table(
        `retrieval-quality: ${QUESTIONS.length} questions over ${pages.size} coreutils manual pages (page-level ranks)`,
        ['ranking', 'embedding model', 'recall@5', 'MRR@10'],
        rows.map((r) => r.map((v) => (typeof v === 'number' ? v.toFixed(3) : v))),
      ),
    ],
    ratios,
    notes: Object.entries(results).map(([k, v]) => `${k}: missed in top 5: ${v.missed.join(', ') || 'none'}`),
    data: { pages: pages.size, questions: QUESTIONS.length, results },
  };
}
