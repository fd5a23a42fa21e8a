import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * BM25 full text (src/services/knowledge/index/full-text.ts). A knowledge base gets a text search configuration,
 * `language` (default `english`); a chunk's `tsvector` is written by ingestion in that configuration (no
 * longer generated with `simple`) with its length in tokens; `knowledge_base_terms` keeps per knowledge base
 * the chunks holding each lexeme and, in the row of the empty term, the chunk count and their total length.
 *
 * Existing knowledge bases: those stored here are re-indexed in `english` (their chunks' tsvectors rewritten,
 * their statistics computed), so they gain stemming and stop words at once. pg_vector ones keep `simple`:
 * their chunks live in outside databases this migration cannot reach, and their tsvectors are `simple`
 * already (their tables are converted when a job or query next connects, chunk-store.ts).
 */
export class FullTextBm251765500000000 implements MigrationInterface {
  name = 'FullTextBm251765500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE knowledge_bases ADD COLUMN language text NOT NULL DEFAULT 'english'`);
    await q.query(`UPDATE knowledge_bases SET language = 'simple' WHERE type = 'pg_vector'`);
    await q.query(`DROP INDEX knowledge_base_chunks_tsv`);
    await q.query(`ALTER TABLE knowledge_base_chunks DROP COLUMN tsv`);
    await q.query(`ALTER TABLE knowledge_base_chunks ADD COLUMN tsv tsvector, ADD COLUMN tsv_length integer`);
    await q.query(`UPDATE knowledge_base_chunks c SET tsv = to_tsvector(k.language::regconfig, c.content)
                   FROM knowledge_bases k WHERE k.knowledge_base_id = c.knowledge_base_id`);
    await q.query(`UPDATE knowledge_base_chunks SET tsv_length =
                     (SELECT coalesce(sum(coalesce(array_length(u.positions, 1), 1)), 0)::int FROM unnest(tsv) u)`);
    await q.query(`CREATE INDEX knowledge_base_chunks_tsv ON knowledge_base_chunks USING gin (tsv)`);
    await q.query(`
      CREATE TABLE knowledge_base_terms (
        knowledge_base_id uuid NOT NULL REFERENCES knowledge_bases(knowledge_base_id) ON DELETE CASCADE,
        term text NOT NULL,
        chunks bigint NOT NULL,
        tokens bigint NOT NULL,
        PRIMARY KEY (knowledge_base_id, term)
      )`);
    await q.query(`
      INSERT INTO knowledge_base_terms (knowledge_base_id, term, chunks, tokens)
      SELECT c.knowledge_base_id, u.lexeme, count(*), sum(coalesce(array_length(u.positions, 1), 1))
        FROM knowledge_base_chunks c, unnest(c.tsv) u GROUP BY c.knowledge_base_id, u.lexeme
      UNION ALL
      SELECT knowledge_base_id, '', count(*), sum(tsv_length) FROM knowledge_base_chunks GROUP BY knowledge_base_id`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE knowledge_base_terms`);
    await q.query(`DROP INDEX knowledge_base_chunks_tsv`);
    await q.query(`ALTER TABLE knowledge_base_chunks DROP COLUMN tsv, DROP COLUMN tsv_length`);
    await q.query(`ALTER TABLE knowledge_base_chunks
                     ADD COLUMN tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', content)) STORED`);
    await q.query(`CREATE INDEX knowledge_base_chunks_tsv ON knowledge_base_chunks USING gin (tsv)`);
    await q.query(`ALTER TABLE knowledge_bases DROP COLUMN language`);
  }
}
