// What a data job does (the activity in activities/data-jobs.ts calls this and heartbeats): list the source,
// skip items whose version (or, once read, content hash) matches what the lake holds, read the rest, pass
// them through the transforms, and write each as one asset `data-connectors/<connector id>/<item path>` of
// the connector's bucket, with its metadata in `assets.meta`; then remove the assets under the prefix the
// source no longer lists. Items are read and written several at a time, and their rows upserted by name in
// batches (./asset-batch.ts), so a retried job (a worker killed mid-job) rewrites, never duplicates. A failing item is an entry of `errors[]` and the others go on; a source that cannot
// list at all fails the job.
import type { RunUpdatesHub } from '../../persistence/run-updates-hub';
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Client } from '@temporalio/client';
import type { DataSource } from 'typeorm';
import type { BlobStore } from '../../blobs/blob-store';
import { assetBlobKey } from '../../blobs/keys';
import type { Config } from '../../config';
import type { Logger } from '../../logger';
import { DataConnector, DataJob } from '../../persistence/entities/data-connector';
import type { JobError } from '../../persistence/entities/job-record';
import { likeEscape } from '../../persistence/scoped';
import type { SecretBox } from '../../security/secret-box';
import { ASSET_BATCH_ROWS, AssetBatch } from './asset-batch';
import { forEachConcurrently } from './concurrently';
import { ASSET_NAME_PATTERN, MAX_ASSET_NAME } from '../storage/buckets';
import { openConfig, sealField } from './config';
import { connectorPrefix } from './connectors';
import { recordProgress } from './job-state';
import { sourceFor } from './sources';
import { isItemError, type SourceContext, type SourceItem } from './sources/source';
import { ItemError } from '../transforms/structure-runs';
import { applyTransforms } from '../transforms/apply';

export interface IngestDeps {
  ds: DataSource;
  blobs: BlobStore;
  box: SecretBox;
  config: Config;
  temporal: Client;
  log: Logger;
  /** Where the worker listens for run updates (waits on a structure run wake on them). */
  runUpdates?: RunUpdatesHub;
}

export interface IngestOutcome {
  status: 'SUCCEEDED' | 'FAILED';
  reason?: string;
  message?: string;
  errors: JobError[];
  bytesIngested: number;
  stats: { listed: number; written: number; unchanged: number; removed: number; failed: number };
}

const NAME_RE = new RegExp(ASSET_NAME_PATTERN);
const PROGRESS_EVERY_MS = 500;

/** The asset name of an item: the prefix and its path made safe (no empty, `.`, `..` or control segments). */
export function assetNameOf(prefix: string, path: string): string {
  const clean = path
    .split('/')
    .map((s) => s.replace(/[\\\u0000-\u001f\u007f]/g, '_'))
    .filter((s) => s !== '' && s !== '.' && s !== '..')
    .join('/');
  const name = `${prefix}${clean || 'item'}`;
  if (Buffer.byteLength(name) <= MAX_ASSET_NAME && NAME_RE.test(name)) return name;
  return `${prefix}long/${createHash('sha256').update(path).digest('hex')}`;
}

const isText = (contentType: string) => /^(text\/|application\/(json|xml|xhtml\+xml))/i.test(contentType);

/** `text/html; charset=utf-8` → `text/html`. */
const mediaType = (t: string) => t.split(';')[0].trim().toLowerCase();

/** Runs job `jobId` of its connector; `signal` aborts it (cancel), `beat` heartbeats. */
export async function ingestDataJob(
  deps: IngestDeps,
  jobId: string,
  ctl: { signal: AbortSignal; beat: () => void },
): Promise<IngestOutcome> {
  const job = await deps.ds.getRepository(DataJob).findOneBy({ data_job_id: jobId });
  const connector =
    job && (await deps.ds.getRepository(DataConnector).findOneBy({ data_connector_id: job.data_connector_id }));
  const stats = { listed: 0, written: 0, unchanged: 0, removed: 0, failed: 0 };
  if (!job || !connector)
    return {
      status: 'FAILED',
      reason: 'ConnectorDeleted',
      message: 'The data connector was deleted',
      errors: [],
      bytesIngested: 0,
      stats,
    };

  const prefix = connectorPrefix(connector.data_connector_id);
  const bucketId = connector.bucket_id;
  const transforms = connector.transforms ?? [];
  const fingerprint = transforms.length
    ? createHash('sha256').update(JSON.stringify(transforms)).digest('hex').slice(0, 16)
    : '';
  const existing = new Map<string, Record<string, string>>();
  const rows: Array<{ name: string; meta: Record<string, string> | null }> = await deps.ds.query(
    `SELECT name, meta FROM assets WHERE bucket_id = $1 AND name LIKE $2 ESCAPE '\\'`,
    [bucketId, `${likeEscape(prefix)}%`],
  );
  for (const r of rows) existing.set(r.name, r.meta ?? {});

  const source = sourceFor(
    connector.type,
    openConfig(deps.box, connector.data_connector_id, connector.type, connector.config),
    {
      ...deps,
      connector,
      jobId,
      saveSecret: async (field, value) => {
        await deps.ds.query(
          `UPDATE data_connectors SET config = jsonb_set(config, $2::text[], $3::jsonb), updated_at = now() WHERE data_connector_id = $1`,
          [
            connector.data_connector_id,
            [connector.type, field],
            JSON.stringify(sealField(deps.box, connector.data_connector_id, field, value)),
          ],
        );
      },
    },
  );
  const maxItemBytes = deps.config.dataConnectors.maxItemBytes;
  const ctx: SourceContext = { signal: ctl.signal, maxItemBytes, progress: () => ctl.beat() };
  const stopIfCancelled = () => {
    if (ctl.signal.aborted) throw ctl.signal.reason ?? new Error('cancelled');
  };

  const errors: JobError[] = [];
  const seen = new Set<string>();
  const keepUris = new Set<string>();
  let bytes = 0;
  let lastProgress = Date.now();
  let lastFlush = Date.now();
  const batch = new AssetBatch(deps.ds, deps.blobs, bucketId, `data-job:${jobId}`);
  /** Items whose bytes are in place and whose row waits in `batch`. */
  const queued = new Map<string, SourceItem>();

  const writeItem = async (item: SourceItem) => {
    const name = assetNameOf(prefix, item.path);
    seen.add(name);
    const old = existing.get(name);
    if (item.version && old && old.version === item.version && (old.transforms ?? '') === fingerprint) {
      stats.unchanged++;
      return;
    }
    const content = await source.read(item, ctx);
    stopIfCancelled();
    if (content.body.length > maxItemBytes)
      throw new ItemError('TooLarge', `${item.sourceUri} is larger than ${maxItemBytes} bytes`);
    let body = content.body;
    let contentType = content.contentType;
    if (transforms.length) {
      if (!isText(contentType))
        throw new ItemError(
          'TransformUnsupported',
          `${item.sourceUri} is ${mediaType(contentType)}: transforms take text`,
        );
      const text = await applyTransforms(
        deps,
        transforms,
        { name: item.path, text: body.toString('utf8') },
        {
          organizationId: connector.organization_id,
          createdBy: connector.created_by,
          jobId,
          signal: ctl.signal,
          beat: ctl.beat,
        },
      );
      body = Buffer.from(text, 'utf8');
      contentType = 'text/plain; charset=utf-8';
    }
    const hash = `sha256:${createHash('sha256').update(body).digest('hex')}`;
    const version = content.version ?? item.version;
    const title = content.title ?? item.title;
    const meta: Record<string, string> = {
      ...(item.meta ?? {}),
      source_uri: item.sourceUri,
      ...(title ? { title } : {}),
      fetched_at: new Date().toISOString(),
      content_type: contentType,
      content_hash: hash,
      ...(version ? { version } : {}),
      ...(fingerprint ? { transforms: fingerprint } : {}),
      data_connector_id: connector.data_connector_id,
      data_job_id: jobId,
    };
    if (old && old.content_hash === hash && (old.transforms ?? '') === fingerprint) {
      stats.unchanged++;
      // Same bytes under a new version: remember the version, so the next job need not read it.
      if (version && old.version !== version) {
        await deps.ds.query(`UPDATE assets SET meta = meta || $3::jsonb WHERE bucket_id = $1 AND name = $2`, [
          bucketId,
          name,
          JSON.stringify({ version }),
        ]);
      }
      return;
    }
    await deps.blobs.put(assetBlobKey(bucketId, name), Readable.from([body]), maxItemBytes);
    queued.set(name, item);
    batch.add({ name, size: body.length, meta });
    // A slow source's rows (and progress) show every PROGRESS_EVERY_MS; a fast one's go ASSET_BATCH_ROWS at a time.
    if (batch.size >= ASSET_BATCH_ROWS || Date.now() - lastFlush >= PROGRESS_EVERY_MS) await flush();
  };

  /** Upserts the queued rows; a row the database refused is its item's error. */
  const flush = async () => {
    lastFlush = Date.now();
    const { written, failed } = await batch.flush();
    for (const row of written) {
      queued.delete(row.name);
      stats.written++;
      bytes += row.size;
    }
    for (const { row, err } of failed) {
      const item = queued.get(row.name)!;
      queued.delete(row.name);
      itemFailed(item, err);
    }
    if (written.length && Date.now() - lastProgress >= PROGRESS_EVERY_MS) {
      lastProgress = Date.now();
      await recordProgress(deps.ds, jobId, bytes);
    }
  };

  const itemFailed = (item: SourceItem, err: unknown) => {
    stats.failed++;
    keepUris.add(item.sourceUri);
    const type = err instanceof ItemError ? err.type : ((err as { type?: string }).type ?? 'ItemFailed');
    errors.push({ type, message: (err as Error).message, path: item.path });
  };

  /** One item, its failure recorded; rejects only on a fatal error or a cancel. */
  const handle = async (item: SourceItem) => {
    try {
      await writeItem(item);
    } catch (err) {
      stopIfCancelled();
      if ((err as { fatal?: string }).fatal) throw err;
      itemFailed(item, err);
    }
  };

  // Items are read and written DATA_CONNECTOR_FETCH_CONCURRENCY at a time (one at a time through transforms,
  // each a structure run), so the next item's read overlaps the current one's write.
  const limit = transforms.length ? 1 : deps.config.dataConnectors.fetchConcurrency;
  try {
    try {
      await forEachConcurrently(source.list(ctx), limit, async (entry) => {
        stopIfCancelled();
        ctl.beat();
        stats.listed++;
        if (!isItemError(entry)) return handle(entry);
        stats.failed++;
        errors.push({ type: entry.type, message: entry.message, path: entry.path });
        seen.add(assetNameOf(prefix, entry.path));
        keepUris.add(entry.path);
      });
    } catch (err) {
      // Whatever stopped the items (every started one has ended), the queued rows are written.
      await flush().catch(() => undefined);
      throw err;
    }
    await flush();
  } catch (err) {
    stopIfCancelled();
    const fatal = (err as { fatal?: string; type?: string }).fatal ?? (err as { type?: string }).type;
    if (!fatal) throw err;
    return { status: 'FAILED', reason: fatal, message: (err as Error).message, errors, bytesIngested: bytes, stats };
  }

  // Items the source no longer has leave the lake; an item that failed this time keeps what it had.
  for (const [name, meta] of existing) {
    if (seen.has(name) || keepUris.has(meta.source_uri) || keepUris.has(meta.requested_url)) continue;
    stopIfCancelled();
    await deps.ds.query(`DELETE FROM assets WHERE bucket_id = $1 AND name = $2`, [bucketId, name]);
    await deps.blobs.delete(assetBlobKey(bucketId, name));
    stats.removed++;
  }
  const failedAll = stats.failed > 0 && stats.failed === stats.listed;
  return {
    status: failedAll ? 'FAILED' : 'SUCCEEDED',
    ...(failedAll ? { reason: 'NoItemIngested', message: 'No item could be ingested' } : {}),
    errors,
    bytesIngested: bytes,
    stats,
  };
}
