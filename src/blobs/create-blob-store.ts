import type { Config } from '../config';
import type { BlobStore } from './blob-store';
import { FsBlobStore } from './fs-blob-store';
import { S3BlobStore } from './s3-blob-store';

/** The blob store the configuration names (BLOB_STORE): api and worker must use the same one. */
export function createBlobStore(config: Pick<Config, 'blobDir' | 'blobS3'>): BlobStore {
  return config.blobS3 ? new S3BlobStore(config.blobS3) : new FsBlobStore(config.blobDir);
}
