// The dense parts of BM25 full text (src/services/knowledge/index/full-text.ts): the query plan (rarest words first,
// candidate words within the postings budget, AND then OR), BM25's idf, the term frequency read back from
// ts_rank, and the quoting of a lexeme as tsquery text; and the full-text-only request of an embedding model.
import { expect } from 'chai';
import { loadConfig } from '../../../../../src/config';
import {
  idf,
  lexemeQuery,
  planQuery,
  POSTINGS_BUDGET,
  tfFromRank,
  TOTALS_TERM,
  ZETA_2,
} from '../../../../../src/services/knowledge/index/full-text';
import { resolveEmbeddingModel } from '../../../../../src/services/knowledge/knowledge-bases';

/** ts_rank('{1,1,1,1}', tsv, 'lexeme', 0) of a lexeme seen `tf` times, as PostgreSQL computes it (float4). */
const rankOf = (tf: number) => {
  let h = 0;
  for (let i = 1; i <= tf; i++) h += 1 / (i * i);
  return Math.fround(h / ZETA_2);
};

describe('knowledge base full text', () => {
  it('reads the term frequency back from ts_rank, exactly up to the 255 positions a lexeme keeps', () => {
    expect(tfFromRank(0)).to.equal(0);
    for (let tf = 1; tf <= 255; tf++) expect(tfFromRank(rankOf(tf)), `tf ${tf}`).to.equal(tf);
    // What PostgreSQL answered for 1 and 24 occurrences (psql: ts_rank over repeat('foo bar ', n)).
    expect(tfFromRank(0.6079271)).to.equal(1);
    expect(tfFromRank(0.9751902)).to.equal(24);
  });

  it('weighs rare words above common ones (idf stays positive for a word in every chunk)', () => {
    expect(idf(1000, 1)).to.be.greaterThan(idf(1000, 100));
    expect(idf(1000, 1000)).to.be.greaterThan(0);
    expect(idf(5, 1)).to.be.closeTo(Math.log(4), 1e-12);
  });

  it('plans rarest first: candidate words within the postings budget, every known word scores', () => {
    const plan = planQuery(
      [
        { term: 'the', chunks: 90_000 },
        { term: 'proxy', chunks: 120 },
        { term: 'configur', chunks: 2_500 },
        { term: 'timeout', chunks: 3_000 },
        { term: TOTALS_TERM, chunks: 100_000 },
        { term: 'unknown', chunks: 0 },
      ],
      { chunks: 100_000, tokens: 6_000_000 },
    );
    expect(plan.scored.map((s) => s.term)).to.deep.equal(['proxy', 'configur', 'timeout', 'the']);
    // proxy + configur fit the budget; timeout would pass it; "the" never chooses candidates.
    expect(120 + 2_500).to.be.at.most(POSTINGS_BUDGET);
    expect(plan.all).to.equal(`'proxy' & 'configur'`);
    expect(plan.any).to.equal(`'proxy' | 'configur'`);
    expect(plan.avgLength).to.equal(60);
  });

  it('keeps the rarest word as the candidate even past the budget; a query of unknown words matches nothing', () => {
    const common = planQuery([{ term: 'the', chunks: 90_000 }], { chunks: 100_000, tokens: 1 });
    expect(common.all).to.equal(`'the'`);
    expect(common.any).to.equal(null);
    const none = planQuery([{ term: TOTALS_TERM, chunks: 10 }], { chunks: 10, tokens: 100 });
    expect(none.all).to.equal(null);
    expect(none.scored).to.deep.equal([]);
  });

  it('quotes a lexeme as tsquery text: quotes doubled, backslashes escaped', () => {
    expect(lexemeQuery("it's")).to.equal(`'it''s'`);
    expect(lexemeQuery('a\\b')).to.equal(`'a\\\\b'`);
    expect(lexemeQuery('a & b | !c')).to.equal(`'a & b | !c'`);
  });

  it('use_default_embedding_model false without a model: full text only, even with a default configured', () => {
    const models = loadConfig({
      DEFAULT_EMBEDDING_MODEL: 'local/m',
      MODEL_PROVIDERS: 'local=http://127.0.0.1:1',
    }).models;
    const config = { gtc_pg_vector: { use_default_embedding_model: false } };
    expect(resolveEmbeddingModel(models, { type: 'gtc_pg_vector', config })).to.equal(null);
    expect(resolveEmbeddingModel(models, { use_default_embedding_model: false })).to.equal(null);
    expect(resolveEmbeddingModel(models, { type: 'gtc_pg_vector', config: { gtc_pg_vector: {} } })).to.equal('local/m');
    const named = { gtc_pg_vector: { use_default_embedding_model: false, embedding_model: 'local/other' } };
    expect(resolveEmbeddingModel(models, { type: 'gtc_pg_vector', config: named })).to.equal('local/other');
  });
});
