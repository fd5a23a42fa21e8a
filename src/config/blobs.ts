// Blobs (assets, code archives, build outputs): the filesystem store or an S3-compatible one; and the disk
// watermarks below which new work is refused.
import path from 'node:path';
import type { EnvReader } from './env';

export interface BlobS3Config {
  bucket: string;
  region: string;
  /** Unset: AWS S3. */
  endpoint?: string;
  /** Where clients reach the store (presigned URLs); unset: `endpoint`. */
  publicEndpoint?: string;
  forcePathStyle: boolean;
  /** Unset: the AWS SDK's default chain (AWS_* variables, instance or task role). */
  credentials?: { accessKeyId: string; secretAccessKey: string };
}

export interface BlobSettings {
  blobDir: string;
  /**
   * BLOB_STORE=s3: blobs live in one bucket of an S3-compatible store instead of under `blobDir`, so several
   * hosts share them (src/blobs/s3-blob-store.ts). Undefined: the filesystem store.
   */
  blobS3: BlobS3Config | undefined;
  /** Admission on free space: below either watermark on DATA_DIR's or BLOB_DIR's filesystem, new work gets 503. */
  disk: { freeMinMb: number; freeMinPercent: number };
}

export function readBlobs(env: EnvReader, dataDir: string): BlobSettings {
  return {
    blobDir: path.resolve(env.string('BLOB_DIR', path.join(dataDir, 'blobs'))),
    blobS3: env.oneOf('BLOB_STORE', 'fs', ['fs', 's3']) === 's3' ? readBlobS3(env) : undefined,
    disk: {
      freeMinMb: env.int('DISK_FREE_MIN_MB', 256, 0),
      freeMinPercent: env.int('DISK_FREE_MIN_PERCENT', 0, 0, 100),
    },
  };
}

function readBlobS3(env: EnvReader): BlobS3Config {
  const bucket = env.optional('BLOB_S3_BUCKET');
  if (!bucket) env.problem('BLOB_S3_BUCKET is required when BLOB_STORE=s3');
  const forcePathStyle = env.bool('BLOB_S3_FORCE_PATH_STYLE', false);
  const accessKeyId = env.optional('BLOB_S3_ACCESS_KEY_ID');
  const secretAccessKey = env.optional('BLOB_S3_SECRET_ACCESS_KEY');
  if (Boolean(accessKeyId) !== Boolean(secretAccessKey))
    env.problem('BLOB_S3_ACCESS_KEY_ID and BLOB_S3_SECRET_ACCESS_KEY are set together or not at all');
  const endpoint = env.url('BLOB_S3_ENDPOINT');
  const publicEndpoint = env.url('BLOB_S3_PUBLIC_URL');
  return {
    bucket: bucket ?? '',
    region: env.string('BLOB_S3_REGION', 'us-east-1'),
    ...(endpoint ? { endpoint } : {}),
    ...(publicEndpoint ? { publicEndpoint } : {}),
    forcePathStyle,
    ...(accessKeyId && secretAccessKey ? { credentials: { accessKeyId, secretAccessKey } } : {}),
  };
}
