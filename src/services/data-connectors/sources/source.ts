// The contract between a data job and the outside source a data connector reads (webscraper, data_lake,
// objstore, drive, wiki, structure). A job lists the source's items, skips those whose `version` matches what
// the lake already holds (incremental re-runs), reads the rest one at a time, and writes each as one asset
// under the connector's prefix. A source never writes to the lake itself and never throws for one bad item:
// it yields a `SourceItemError` and goes on; it throws only when nothing can be listed at all (bad
// credentials, an unreachable host), which fails the job with that message.
import type { RunUpdatesHub } from '../../../persistence/run-updates-hub';
import type { Client } from '@temporalio/client';
import type { DataSource } from 'typeorm';
import type { BlobStore } from '../../../blobs/blob-store';
import type { Config } from '../../../config';
import type { Logger } from '../../../logger';
import type { DataConnector } from '../../../persistence/entities/data-connector';
import type { SecretBox } from '../../../security/secret-box';

/** One item of a source, as listed: cheap to produce, no content yet. */
export interface SourceItem {
  /** Stable name of the item within its connector, a relative asset path (`a/b.html`); the job prefixes it. */
  path: string;
  /** Where it came from: `https://…`, `s3://bucket/key`, `drive://<file id>`, `wiki://<domain>/<page id>`. */
  sourceUri: string;
  title?: string;
  /**
   * What changes when the content changes (ETag, modified time, revision number), when the source can say so
   * without reading it. Equal to the stored one: the item is not read again. Absent: the item is read, and
   * the content hash decides whether the asset is rewritten.
   */
  version?: string;
  /** Anything else the source knows, kept as string metadata beside the asset (and as chunk `meta`). */
  meta?: Record<string, string>;
}

/** An item's content, as read. */
export interface SourceContent {
  body: Buffer;
  /** Media type, e.g. `text/html; charset=utf-8` or `text/plain` after an export. */
  contentType: string;
  title?: string;
  /** A version learnt only by reading (a response's ETag); overrides the listed one. */
  version?: string;
}

/** An item that could not be listed or read: it becomes an entry of the job's `errors[]`. */
export interface SourceItemError {
  error: true;
  /** A short error name, e.g. `FetchFailed`, `TooLarge`, `Forbidden`, `AddressRefused`, `NotFound`. */
  type: string;
  message: string;
  /** The item's path or source URI. */
  path: string;
}

export interface SourceContext {
  /** Aborted when the job is cancelled: every request of the source passes it on. */
  signal: AbortSignal;
  /** The largest item, in bytes: a larger one is a `TooLarge` error, read no further than the cap. */
  maxItemBytes: number;
  /** Called while listing and reading long, so the activity heartbeats. */
  progress(note: string): void;
}

export interface ConnectorSource {
  list(ctx: SourceContext): AsyncIterable<SourceItem | SourceItemError>;
  read(item: SourceItem, ctx: SourceContext): Promise<SourceContent>;
}

export const isItemError = (x: SourceItem | SourceItemError): x is SourceItemError => 'error' in x;

/** What a source factory may use (sourceFor in ./index.ts builds a source of a connector's type). */
export interface SourceDeps {
  ds: DataSource;
  blobs: BlobStore;
  box: SecretBox;
  config: Config;
  temporal: Client;
  log: Logger;
  /** Where the worker listens for run updates (waits on a structure run wake on them). */
  runUpdates?: RunUpdatesHub;
  connector: DataConnector;
  /** The job reading the source (ids derived from it make retried steps idempotent). */
  jobId: string;
  /** Stores a secret field the source learnt (an OAuth access token), sealed, in the connector's config. */
  saveSecret(field: string, value: string): Promise<void>;
}

export type SourceFactory = (config: Record<string, unknown>, deps: SourceDeps) => ConnectorSource;
