// pgvector on the stack's database: the migration created the extension, and an HNSW index answers a
// nearest-neighbour query by cosine distance (the storage the knowledge bases build on).
import { expect } from 'chai';
import { getStack } from '../harness/stack';

describe('pgvector', () => {
  it('is installed by the migrations and answers a cosine query through an HNSW index', async () => {
    const { ds } = getStack();
    const [ext] = await ds.query(`SELECT extversion FROM pg_extension WHERE extname = 'vector'`);
    expect(ext, 'extension vector').to.not.equal(undefined);

    // One connection, one transaction: the temporary table and the planner setting stay in it.
    const runner = ds.createQueryRunner();
    await runner.connect();
    try {
      await runner.startTransaction();
      await runner.query(`CREATE TEMPORARY TABLE items (id int PRIMARY KEY, embedding vector(3)) ON COMMIT DROP`);
      await runner.query(`INSERT INTO items VALUES (1, '[1,0,0]'), (2, '[0,1,0]'), (3, '[0,0,1]'), (4, '[0.6,0.8,0]')`);
      await runner.query(`CREATE INDEX items_embedding ON items USING hnsw (embedding vector_cosine_ops)`);
      await runner.query(`SET LOCAL enable_seqscan = off`); // four rows: the planner would rather scan them
      const nearest = `SELECT id, embedding <=> '[0.1,0.9,0]' AS distance FROM items ORDER BY embedding <=> '[0.1,0.9,0]' LIMIT 2`;
      const plan = (await runner.query(`EXPLAIN ${nearest}`))
        .map((r: { 'QUERY PLAN': string }) => r['QUERY PLAN'])
        .join('\n');
      expect(plan).to.contain('Index Scan using items_embedding');
      const rows: Array<{ id: number; distance: number }> = await runner.query(nearest);
      expect(rows.map((r) => r.id)).to.deep.equal([2, 4]);
      expect(rows[0].distance).to.be.lessThan(rows[1].distance);
    } finally {
      await runner.rollbackTransaction().catch(() => undefined);
      await runner.release();
    }
  });
});
