// Full text of a knowledge base, ranked by BM25 in PostgreSQL. Each chunk keeps a `tsvector` in the knowledge
// base's text search configuration (`language`: stemming and stop words; `simple` for none) and its length in
// tokens; a terms table keeps, per knowledge base, how many chunks hold each lexeme (its document frequency)
// and, in its row of the empty term, the number of chunks and their total length. Ingestion adjusts both in
// the transaction that writes an asset's chunks (and when chunks go), so a query reads exact statistics.
//
// A query reads the statistics of its own lexemes (one index lookup each) and plans (planQuery): the rarest
// words, those whose postings fit a budget, choose the candidates; every word scores them. First the chunks
// holding all of those words (AND); when they are fewer than asked, also those holding any of them (OR). The
// GIN index never reads the postings of a word that is in most of the corpus, so a common word costs nothing.
// The term frequency of a lexeme in a chunk is read back from ts_rank (tfFromRank), which finds the lexeme by
// binary search in the tsvector instead of unnesting it.

/** What this module needs of a chunk store (chunk-store.ts's ChunkStore, which imports this module). */
interface ChunkStore {
  readonly table: string;
  readonly termsTable: string;
  query<T = any>(sql: string, params?: unknown[]): Promise<T[]>;
  execute(sql: string, params?: unknown[]): Promise<number>;
}

/** PostgreSQL's text search configurations a knowledge base may use (those of PostgreSQL 15 and later). */
export const LANGUAGES = [
  'simple',
  'arabic',
  'armenian',
  'basque',
  'catalan',
  'danish',
  'dutch',
  'english',
  'finnish',
  'french',
  'german',
  'greek',
  'hindi',
  'hungarian',
  'indonesian',
  'irish',
  'italian',
  'lithuanian',
  'nepali',
  'norwegian',
  'portuguese',
  'romanian',
  'russian',
  'serbian',
  'spanish',
  'swedish',
  'tamil',
  'turkish',
  'yiddish',
] as const;
export type Language = (typeof LANGUAGES)[number];
export const DEFAULT_LANGUAGE: Language = 'english';

/** BM25's usual constants (Robertson and Zaragoza, 2009; Lucene's defaults). */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;
/** Postings the candidate words of a query may hold together: bounds what the GIN index reads. */
export const POSTINGS_BUDGET = 4000;
/** Candidates scored at most per phase (a single word over the budget is cut here). */
export const MAX_CANDIDATES = 2000;
/** Distinct words of a query that count (a longer query keeps its rarest ones). */
export const MAX_QUERY_TERMS = 32;

/** The terms row that holds the knowledge base's totals (never a lexeme). */
export const TOTALS_TERM = '';

/** SQL of the length in tokens of a tsvector expression (positions counted; a lexeme keeps at most 255). */
export const tokenCountSql = (tsv: string) =>
  `(SELECT coalesce(sum(coalesce(array_length(u.positions, 1), 1)), 0)::int FROM unnest(${tsv}) u)`;

/** A lexeme as tsquery text, quoted so that the tsquery parser takes it as it is (no normalization). */
export const lexemeQuery = (lexeme: string) => `'${lexeme.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;

/**
 * ts_rank of a one-lexeme query with unit weights and no normalization is H(tf) / ζ(2), where H(n) = Σ 1/i²
 * (i = 1..n) and ζ(2) = π²/6; since ζ(2) − H(n) ≈ 1 / (n + ½), tf = round(1 / (ζ(2) · (1 − rank)) − ½), exact
 * up to the 255 positions a tsvector keeps per lexeme. The same expression in SQL is TF_SQL.
 */
export const ZETA_2 = Math.PI ** 2 / 6;
export const tfFromRank = (rank: number) => (rank > 0 ? Math.round(1 / (ZETA_2 * (1 - rank)) - 0.5) : 0);
const TF_SQL = (rank: string) => `CASE WHEN ${rank} > 0 THEN round(1 / (${ZETA_2} * (1 - ${rank})) - 0.5) ELSE 0 END`;

/** BM25's inverse document frequency (the +1 keeps it positive for words in most chunks). */
export const idf = (chunks: number, df: number) => Math.log(1 + (chunks - df + 0.5) / (df + 0.5));

export interface TermStat {
  term: string;
  /** Chunks holding the term. */
  chunks: number;
}

export interface QueryPlan {
  /** Every known word of the query, rarest first, with its weight. */
  scored: Array<{ term: string; idf: number }>;
  /** tsquery text of the candidates: all of the rare words, then any of them. Null: nothing can match. */
  all: string | null;
  any: string | null;
  avgLength: number;
}

/**
 * The plan of a query: its words known to the knowledge base, rarest first (at most MAX_QUERY_TERMS), and the
 * candidate words: the longest run of the rarest ones whose postings fit POSTINGS_BUDGET (at least the rarest).
 */
export function planQuery(stats: TermStat[], totals: { chunks: number; tokens: number }): QueryPlan {
  const known = stats
    .filter((s) => s.term !== TOTALS_TERM && s.chunks > 0)
    .sort((a, b) => a.chunks - b.chunks || a.term.localeCompare(b.term))
    .slice(0, MAX_QUERY_TERMS);
  const scored = known.map((s) => ({ term: s.term, idf: idf(totals.chunks, s.chunks) }));
  const candidates: string[] = [];
  let postings = 0;
  for (const s of known) {
    if (candidates.length && postings + s.chunks > POSTINGS_BUDGET) break;
    candidates.push(s.term);
    postings += s.chunks;
  }
  const quoted = candidates.map(lexemeQuery);
  return {
    scored,
    all: quoted.length ? quoted.join(' & ') : null,
    any: quoted.length > 1 ? quoted.join(' | ') : null,
    avgLength: totals.chunks ? Math.max(1, totals.tokens / totals.chunks) : 1,
  };
}

export interface Hit {
  chunk_id: string;
  score: number;
}

/** BM25 of the chunks matching `match` (at most MAX_CANDIDATES of them), best first, `limit` of them. */
async function scoreCandidates(
  store: ChunkStore,
  kbId: string,
  filter: string,
  plan: QueryPlan,
  match: string,
  limit: number,
): Promise<Hit[]> {
  const rows: Hit[] = await store.query(
    `SELECT c.chunk_id,
            sum(t.idf * x.tf * ${BM25_K1 + 1} / (x.tf + ${BM25_K1} * (1 - ${BM25_B} + ${BM25_B} * c.tsv_length / $6))) AS score
     FROM (SELECT chunk_id, tsv, coalesce(tsv_length, 0) AS tsv_length FROM ${store.table}
           WHERE knowledge_base_id = $1 AND meta @> $2::jsonb AND tsv @@ $3::tsquery LIMIT ${MAX_CANDIDATES}) c
     CROSS JOIN LATERAL unnest($4::tsquery[], $5::float8[]) AS t(q, idf)
     CROSS JOIN LATERAL (SELECT ${TF_SQL("ts_rank('{1,1,1,1}', c.tsv, t.q, 0)")} AS tf) x
     WHERE x.tf > 0
     GROUP BY c.chunk_id, c.tsv_length
     ORDER BY score DESC, c.chunk_id LIMIT $7`,
    [
      kbId,
      filter,
      match,
      plan.scored.map((s) => lexemeQuery(s.term)),
      plan.scored.map((s) => s.idf),
      plan.avgLength,
      limit,
    ],
  );
  return rows.map((r) => ({ chunk_id: r.chunk_id, score: Number(r.score) }));
}

/** The statistics of the query's lexemes (in the knowledge base's language) and the knowledge base's totals. */
async function statsOf(store: ChunkStore, kbId: string, language: string, query: string) {
  const rows: Array<{ term: string; chunks: string; tokens: string }> = await store.query(
    `SELECT term, chunks, tokens FROM ${store.termsTable}
     WHERE knowledge_base_id = $1
       AND term = ANY(ARRAY(SELECT lexeme FROM unnest(to_tsvector($2::regconfig, $3))) || $4::text)`,
    [kbId, language, query, TOTALS_TERM],
  );
  const totals = rows.find((r) => r.term === TOTALS_TERM);
  return {
    stats: rows.map((r) => ({ term: r.term, chunks: Number(r.chunks) })),
    totals: { chunks: Number(totals?.chunks ?? 0), tokens: Number(totals?.tokens ?? 0) },
  };
}

/** The `limit` best chunks of `query` by BM25: those holding all its rare words, then any of them. */
export async function fullTextHits(
  store: ChunkStore,
  kb: { knowledge_base_id: string; language: string },
  query: string,
  filter: string,
  limit: number,
): Promise<Hit[]> {
  const { stats, totals } = await statsOf(store, kb.knowledge_base_id, kb.language, query);
  const plan = planQuery(stats, totals);
  if (!plan.all) return [];
  const all = await scoreCandidates(store, kb.knowledge_base_id, filter, plan, plan.all, limit);
  if (all.length >= limit || !plan.any) return all;
  // Fewer than asked hold every rare word: those holding any of them join, ranked by the same score.
  const any = await scoreCandidates(store, kb.knowledge_base_id, filter, plan, plan.any, limit);
  const seen = new Set(any.map((h) => h.chunk_id));
  return [...any, ...all.filter((h) => !seen.has(h.chunk_id))]
    .sort((a, b) => b.score - a.score || a.chunk_id.localeCompare(b.chunk_id))
    .slice(0, limit);
}

/**
 * Adds (`sign` 1) or removes (−1) the chunks `where` selects to or from the knowledge base's statistics:
 * before they are deleted, after they are written. Terms no chunk holds any more are dropped.
 * `where` is SQL over the chunks table aliased `c`, with $1 the knowledge base and its own parameters after.
 */
export async function adjustTermStats(
  tx: ChunkStore,
  kbId: string,
  sign: 1 | -1,
  where: string,
  params: unknown[] = [],
): Promise<void> {
  const emptied: Array<{ term: string }> = await tx
    .query(
      `INSERT INTO ${tx.termsTable} AS s (knowledge_base_id, term, chunks, tokens)
     SELECT $1, u.lexeme, ${sign} * count(*), ${sign} * sum(coalesce(array_length(u.positions, 1), 1))
       FROM ${tx.table} c, unnest(c.tsv) u WHERE c.knowledge_base_id = $1 AND (${where}) GROUP BY u.lexeme
     UNION ALL
     SELECT $1, '${TOTALS_TERM}', ${sign} * count(*), ${sign} * coalesce(sum(c.tsv_length), 0)
       FROM ${tx.table} c WHERE c.knowledge_base_id = $1 AND (${where})
     ON CONFLICT (knowledge_base_id, term)
       DO UPDATE SET chunks = s.chunks + EXCLUDED.chunks, tokens = s.tokens + EXCLUDED.tokens
     RETURNING term, chunks`,
      [kbId, ...params],
    )
    .then((rows: Array<{ term: string; chunks: string }>) =>
      rows.filter((r) => r.term !== TOTALS_TERM && Number(r.chunks) <= 0),
    );
  if (emptied.length)
    await tx.execute(`DELETE FROM ${tx.termsTable} WHERE knowledge_base_id = $1 AND term = ANY($2::text[])`, [
      kbId,
      emptied.map((r) => r.term),
    ]);
}
