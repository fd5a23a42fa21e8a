// The batched asset rows of a data job (src/services/data-connectors/asset-batch.ts) against the real database
// and blob store: one flush upserts every queued row, a name queued twice keeps its last row, a row the
// database refuses is that row's failure only, and a deleted bucket is fatal and leaves no bytes behind.
import { Readable } from 'node:stream';
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { FsBlobStore } from '../../../../src/blobs/fs-blob-store';
import { assetBlobKey } from '../../../../src/blobs/keys';
import { AssetBatch } from '../../../../src/services/data-connectors/asset-batch';
import { getStack, newTenant } from '../../../harness/stack';

describe('data connectors: asset rows in batches', () => {
  async function bucketOfNewTenant(): Promise<string> {
    const t = await newTenant('asset-batch');
    const rows = await getStack().ds.query(`SELECT default_bucket_id FROM organizations WHERE organization_id = $1`, [
      t.organizationId,
    ]);
    return rows[0].default_bucket_id;
  }

  const assetsOf = (bucketId: string): Promise<Array<{ name: string; size: string; meta: Record<string, string> }>> =>
    getStack().ds.query(`SELECT name, size, meta FROM assets WHERE bucket_id = $1 ORDER BY name`, [bucketId]);

  it('upserts every queued row in one flush; a name queued twice keeps its last row', async () => {
    const bucketId = await bucketOfNewTenant();
    const batch = new AssetBatch(getStack().ds, new FsBlobStore(getStack().config.blobDir), bucketId, 'data-job:x');
    batch.add({ name: 'p/a.txt', size: 1, meta: { v: '1' } });
    batch.add({ name: 'p/b.txt', size: 2, meta: { v: '1' } });
    batch.add({ name: 'p/a.txt', size: 3, meta: { v: '2' } });
    expect(batch.size).to.equal(2);
    const outcome = await batch.flush();
    expect(outcome.written.map((r) => r.name)).to.deep.equal(['p/b.txt', 'p/a.txt']);
    expect(outcome.failed).to.deep.equal([]);
    expect(batch.size).to.equal(0);
    expect(await assetsOf(bucketId)).to.deep.equal([
      { name: 'p/a.txt', size: '3', meta: { v: '2' } },
      { name: 'p/b.txt', size: '2', meta: { v: '1' } },
    ]);

    batch.add({ name: 'p/b.txt', size: 5, meta: { v: '3' } });
    await batch.flush();
    expect((await assetsOf(bucketId)).find((r) => r.name === 'p/b.txt')).to.deep.equal({
      name: 'p/b.txt',
      size: '5',
      meta: { v: '3' },
    });
    expect(await batch.flush()).to.deep.equal({ written: [], failed: [] });
  });

  it('a row the database refuses fails alone; the rest of its batch is written', async () => {
    const bucketId = await bucketOfNewTenant();
    const batch = new AssetBatch(getStack().ds, new FsBlobStore(getStack().config.blobDir), bucketId, 'data-job:x');
    batch.add({ name: 'q/good.txt', size: 1, meta: {} });
    batch.add({ name: 'q/bad\u0000.txt', size: 1, meta: {} }); // PostgreSQL text holds no NUL
    const outcome = await batch.flush();
    expect(outcome.written.map((r) => r.name)).to.deep.equal(['q/good.txt']);
    expect(outcome.failed.map((f) => f.row.name)).to.deep.equal(['q/bad\u0000.txt']);
    expect((await assetsOf(bucketId)).map((r) => r.name)).to.deep.equal(['q/good.txt']);
  });

  it('a deleted bucket is fatal (BucketDeleted) and the batch leaves no bytes behind', async () => {
    const blobs = new FsBlobStore(getStack().config.blobDir);
    const bucketId = randomUUID();
    await blobs.put(assetBlobKey(bucketId, 'r/a.txt'), Readable.from([Buffer.from('a')]), 1 << 10);
    const batch = new AssetBatch(getStack().ds, blobs, bucketId, 'data-job:x');
    batch.add({ name: 'r/a.txt', size: 1, meta: {} });
    const err = await batch.flush().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.have.property('fatal', 'BucketDeleted');
    expect(await blobs.get(assetBlobKey(bucketId, 'r/a.txt'))).to.equal(undefined);
  });
});
