// The asset rows a data job writes, in batches: the job puts each item's bytes in the blob store at once and
// queues its row here; one `INSERT ... SELECT FROM unnest(...)` upserts a whole batch (one round trip instead
// of one per item). A row becomes visible only after its bytes are in place, as before; a job that stops
// between the two (a lost worker) leaves bytes that the retried job's upsert of the same name overwrites.
// A batch the database refuses is retried row by row, so one bad row is one item's error, not the batch's.
import type { DataSource } from 'typeorm';
import type { BlobStore } from '../../blobs/blob-store';
import { assetBlobKey } from '../../blobs/keys';

/** Rows per INSERT: large enough that the round trips vanish, small enough that progress shows. */
export const ASSET_BATCH_ROWS = 100;

export interface AssetRow {
  name: string;
  size: number;
  meta: Record<string, string>;
}

/** What became of a flushed batch: rows written, and the names whose row failed (with why). */
export interface BatchOutcome {
  written: AssetRow[];
  failed: Array<{ row: AssetRow; err: Error }>;
}

const UPSERT = `INSERT INTO assets (bucket_id, name, organization_id, size, meta, created_by, created_at, updated_at)
  SELECT b.bucket_id, r.name, b.organization_id, r.size, r.meta, $5, clock_timestamp(), clock_timestamp()
  FROM buckets b, unnest($2::text[], $3::bigint[], $4::jsonb[]) AS r(name, size, meta)
  WHERE b.bucket_id = $1
  ON CONFLICT (bucket_id, name) DO UPDATE SET size = EXCLUDED.size, meta = EXCLUDED.meta, updated_at = EXCLUDED.updated_at
  RETURNING name`;

export class AssetBatch {
  /** By name: an item written twice in one batch keeps its last row (its bytes are the last ones put). */
  private pending = new Map<string, AssetRow>();

  constructor(
    private readonly ds: DataSource,
    private readonly blobs: BlobStore,
    private readonly bucketId: string,
    private readonly createdBy: string,
  ) {}

  get size(): number {
    return this.pending.size;
  }

  add(row: AssetRow): void {
    this.pending.delete(row.name);
    this.pending.set(row.name, row);
  }

  /**
   * Upserts the queued rows. Throws `{ fatal: 'BucketDeleted' }` (after removing the batch's bytes) when the
   * bucket is gone, as no row can be written then.
   */
  async flush(): Promise<BatchOutcome> {
    const rows = [...this.pending.values()];
    this.pending.clear();
    if (!rows.length) return { written: [], failed: [] };
    let written: AssetRow[];
    const failed: BatchOutcome['failed'] = [];
    try {
      written = (await this.upsert(rows)).length ? rows : [];
    } catch {
      written = [];
      for (const row of rows) {
        try {
          if ((await this.upsert([row])).length) written.push(row);
        } catch (err) {
          failed.push({ row, err: err as Error });
        }
      }
    }
    if (!written.length && !failed.length) {
      for (const row of rows) await this.blobs.delete(assetBlobKey(this.bucketId, row.name));
      throw Object.assign(new Error(`The connector's bucket ${this.bucketId} was deleted`), { fatal: 'BucketDeleted' });
    }
    return { written, failed };
  }

  private upsert(rows: AssetRow[]): Promise<unknown[]> {
    return this.ds.query(UPSERT, [
      this.bucketId,
      rows.map((r) => r.name),
      rows.map((r) => r.size),
      rows.map((r) => JSON.stringify(r.meta)),
      this.createdBy,
    ]);
  }
}
