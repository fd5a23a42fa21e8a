import { Readable, Transform } from 'node:stream';
import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { BlobStore, BlobTooLargeError, checkBlobKey, type BlobOperation } from './blob-store';

export interface S3BlobStoreOptions {
  bucket: string;
  region: string;
  /** Unset: AWS. */
  endpoint?: string;
  /** Where clients reach the store, for presigned URLs (a container's internal endpoint is often not it). */
  publicEndpoint?: string;
  forcePathStyle: boolean;
  /** Unset: the SDK's default chain (environment, instance role). */
  credentials?: { accessKeyId: string; secretAccessKey: string };
}

/** DeleteObjects takes at most this many keys. */
const DELETE_BATCH = 1000;
/** Multipart part size: uploads are streamed in parts of this size, at most `queueSize` parts in memory. */
const PART_BYTES = 8 * 1024 * 1024;

/**
 * Blobs as objects of one bucket of an S3-compatible store, under the same keys as the filesystem store.
 * Uploads stream in parts (`@aws-sdk/lib-storage`) and a new object appears only when complete, so a
 * replaced blob is never seen half-written; an upload past the limit is aborted and leaves nothing.
 */
export class S3BlobStore implements BlobStore {
  private readonly client: S3Client;
  private readonly signer: S3Client;
  readonly bucket: string;

  constructor(options: S3BlobStoreOptions) {
    const common = {
      region: options.region,
      forcePathStyle: options.forcePathStyle,
      // A copy: the SDK marks the credentials object it is given, and the configuration's is frozen.
      credentials: options.credentials && { ...options.credentials },
      // S3-compatible stores differ in the newer default checksum headers; ask for them only where required.
      requestChecksumCalculation: 'WHEN_REQUIRED' as const,
      responseChecksumValidation: 'WHEN_REQUIRED' as const,
    };
    this.bucket = options.bucket;
    this.client = new S3Client({ ...common, endpoint: options.endpoint });
    this.signer = new S3Client({ ...common, endpoint: options.publicEndpoint ?? options.endpoint });
  }

  async put(key: string, body: Readable, maxBytes: number): Promise<{ size: number }> {
    checkBlobKey(key);
    let size = 0;
    let tooLarge = false;
    const counter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        size += chunk.length;
        if (size > maxBytes) {
          tooLarge = true;
          return done(new BlobTooLargeError(maxBytes));
        }
        done(null, chunk);
      },
    });
    body.on('error', (err) => counter.destroy(err));
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: key, Body: body.pipe(counter) },
      partSize: PART_BYTES,
      queueSize: 2,
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (err) {
      // As the filesystem store's pipeline does: the body is given up (the api route still answers, 413).
      body.destroy();
      counter.destroy();
      if (tooLarge) throw new BlobTooLargeError(maxBytes);
      throw err;
    }
    return { size };
  }

  async get(key: string): Promise<{ stream: Readable; size: number } | undefined> {
    checkBlobKey(key);
    try {
      const res = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      return { stream: res.Body as Readable, size: res.ContentLength ?? 0 };
    } catch (err) {
      if (err instanceof NoSuchKey || (err instanceof S3ServiceException && err.$metadata.httpStatusCode === 404)) {
        return undefined;
      }
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    checkBlobKey(key);
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  /** `prefix` itself and every key under `prefix/`, listed and deleted 1,000 at a time. */
  async deletePrefix(prefix: string): Promise<void> {
    checkBlobKey(prefix);
    await this.delete(prefix);
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({
          Bucket: this.bucket,
          Prefix: `${prefix}/`,
          ContinuationToken: token,
          MaxKeys: DELETE_BATCH,
        }),
      );
      const keys = (page.Contents ?? []).flatMap((o) => (o.Key ? [{ Key: o.Key }] : []));
      if (keys.length) {
        const res = await this.client.send(
          new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: keys, Quiet: true } }),
        );
        if (res.Errors?.length) {
          const e = res.Errors[0];
          throw new Error(
            `deleting ${res.Errors.length} blobs under ${prefix}/ failed, e.g. ${e.Key}: ${e.Code} ${e.Message}`,
          );
        }
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  /** A SigV4 presigned URL of the store itself: one operation on one key, until `expires` (unix seconds). */
  async presignedUrl(key: string, operation: BlobOperation, expires: number): Promise<string> {
    checkBlobKey(key);
    const expiresIn = Math.max(1, expires - Math.floor(Date.now() / 1000));
    const command =
      operation === 'GET'
        ? new GetObjectCommand({ Bucket: this.bucket, Key: key })
        : new PutObjectCommand({ Bucket: this.bucket, Key: key });
    return getSignedUrl(this.signer, command, { expiresIn });
  }

  close(): void {
    this.client.destroy();
    this.signer.destroy();
  }
}
