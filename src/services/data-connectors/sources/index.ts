// The registry of connector sources: type → factory. A factory gets the connector's opened config (secret
// fields in clear) and what a source may use, and answers a ConnectorSource (./source.ts):
//   (config: Record<string, unknown>, deps: SourceDeps) => ConnectorSource
// objstore, drive and wiki are written on their own; until their modules are plugged in here, their jobs end
// FAILED with `SourceNotServed`.
import type { Client } from '@temporalio/client';
import type { DataSource } from 'typeorm';
import type { BlobStore } from '../../../blobs/blob-store';
import type { Config } from '../../../config';
import type { Logger } from '../../../logger';
import type { DataConnector } from '../../../persistence/entities/data-connector';
import type { SecretBox } from '../../../security/secret-box';
import { dataLakeSource } from './data-lake';
import type { ConnectorSource } from './source';
import { structureSource } from './structure';
import { webscraperSource } from './webscraper';

export interface SourceDeps {
  ds: DataSource;
  blobs: BlobStore;
  box: SecretBox;
  config: Config;
  temporal: Client;
  log: Logger;
  connector: DataConnector;
  /** The job reading the source (ids derived from it make retried steps idempotent). */
  jobId: string;
  /** Stores a secret field the source learnt (an OAuth access token), sealed, in the connector's config. */
  saveSecret(field: string, value: string): Promise<void>;
}

export type SourceFactory = (config: Record<string, unknown>, deps: SourceDeps) => ConnectorSource;

/** A source whose type is accepted but not served by this build: every job of it fails, saying so. */
const notServed =
  (type: string): SourceFactory =>
  () => ({
    async *list() {
      throw Object.assign(new Error(`Data connectors of type ${type} are not served yet by this installation`), {
        type: 'SourceNotServed',
      });
    },
    read: () => Promise.reject(new Error(`${type} is not served yet`)),
  });

export const SOURCES: Record<string, SourceFactory> = {
  webscraper: webscraperSource,
  data_lake: dataLakeSource,
  structure: structureSource,
  objstore: notServed('objstore'),
  drive: notServed('drive'),
  wiki: notServed('wiki'),
};

export function sourceFor(type: string, config: Record<string, unknown>, deps: SourceDeps): ConnectorSource {
  const factory = SOURCES[type] ?? notServed(type);
  return factory(config, deps);
}
