// Buckets and assets. Records live in PostgreSQL; bytes live in the blob store under a key derived
// from (bucket_id, sha256(name)). Bytes move through presigned URLs that point at this api (downloads: at the
// S3 store itself when blobs live there, see assetUrl): the HMAC signature, not an API key, authorizes them, so
// any plain HTTP client can use them.
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { PassThrough, Readable } from 'node:stream';
import { DataSource } from 'typeorm';
import type { Caller } from '../caller';
import { badRequest, conflict, forbidden, notFound, payloadTooLarge } from '../../errors';
import { PageRequest, paginate, Pagination, skipTake } from '../../persistence/pagination';
import { BlobStore, BlobTooLargeError } from '../../blobs/blob-store';
import { assetBlobKey, bucketBlobPrefix } from '../../blobs/keys';
import { Asset, Bucket } from '../../persistence/entities';
import { findInOrg, pageInOrg } from '../../persistence/scoped';
import type { SecretBox } from '../../security/secret-box';
import { likeEscape } from '../../persistence/scoped';

export const MAX_BUCKET_NAME = 256;
export const MAX_ASSET_NAME = 256;

interface Stores {
  ds: DataSource;
  blobs: BlobStore;
}

// ---- Buckets ----

export const findBucket = (ds: DataSource, caller: Caller, bucketId: string) =>
  findInOrg(ds, Bucket, caller.organizationId, { bucket_id: bucketId }, 'Bucket');

export const listBuckets = (ds: DataSource, caller: Caller, page: PageRequest) =>
  // bucket_id breaks ties between buckets created in the same millisecond, so pages never overlap.
  pageInOrg(ds, Bucket, caller.organizationId, page, {}, { created_at: 'DESC', bucket_id: 'DESC' });

export async function createBucket(ds: DataSource, caller: Caller, name: string): Promise<Bucket> {
  const now = new Date();
  return ds.getRepository(Bucket).save({
    bucket_id: randomUUID(),
    organization_id: caller.organizationId,
    name,
    created_by: caller.actor,
    created_at: now,
    updated_at: now,
  });
}

export async function updateBucket(ds: DataSource, bucket: Bucket, changes: { name?: string }): Promise<Bucket> {
  if (changes.name !== undefined) bucket.name = changes.name;
  bucket.updated_at = new Date();
  return ds.getRepository(Bucket).save(bucket);
}

/**
 * Rows first, then bytes: a failure in between leaves unreachable bytes, never records without data. The
 * organization's default bucket stays (409): runs and clients rely on it being there.
 */
export async function deleteBucket({ ds, blobs }: Stores, bucket: Bucket): Promise<void> {
  await ds.transaction(async (em) => {
    if ((await em.query(`SELECT 1 FROM organizations WHERE default_bucket_id = $1`, [bucket.bucket_id])).length) {
      throw conflict(
        `Bucket ${bucket.bucket_id} is the organization's default bucket (default_bucket_id) and cannot be deleted`,
      );
    }
    await em.getRepository(Asset).delete({ bucket_id: bucket.bucket_id });
    await em.getRepository(Bucket).delete({ bucket_id: bucket.bucket_id });
  });
  await blobs.deletePrefix(bucketBlobPrefix(bucket.bucket_id));
}

// ---- Asset names ----

/**
 * Names are `/`-separated paths chosen by users (`dir/sub/file.txt`). They never reach the filesystem
 * (see blobs/keys.ts), but names that look like traversal or are ambiguous are refused so users get a
 * clear error rather than a surprising object: segments of characters other than `/`, `\` and control
 * characters, none of them empty, `.` or `..` (so no leading, trailing or doubled `/`). The routes'
 * schemas carry this pattern (no lookarounds: every client's regex engine must read it).
 */
const NAME_CHAR = '[^/\\\\\\u0000-\\u001f\\u007f]';
const NAME_START = '[^./\\\\\\u0000-\\u001f\\u007f]';
const SEGMENT = `(?:${NAME_START}${NAME_CHAR}*|\\.${NAME_START}${NAME_CHAR}*|\\.\\.${NAME_CHAR}+)`;
export const ASSET_NAME_PATTERN = `^${SEGMENT}(?:/${SEGMENT})*$`;

// ---- Asset records ----

export async function listAssets(
  ds: DataSource,
  bucket: Bucket,
  page: PageRequest,
  filter: { prefix?: string; postfix?: string },
): Promise<{ items: Asset[]; pagination: Pagination }> {
  const { skip, take } = skipTake(page);
  const q = ds
    .getRepository(Asset)
    .createQueryBuilder('a')
    .where('a.bucket_id = :bucketId', { bucketId: bucket.bucket_id });
  // The user's text is matched literally: `%`, `_` and `\` are escaped.
  if (filter.prefix) q.andWhere(`a.name LIKE :prefix ESCAPE '\\'`, { prefix: `${likeEscape(filter.prefix)}%` });
  if (filter.postfix) q.andWhere(`a.name LIKE :postfix ESCAPE '\\'`, { postfix: `%${likeEscape(filter.postfix)}` });
  const [items, total] = await q.orderBy('a.name', 'ASC').offset(skip).limit(take).getManyAndCount();
  return { items, pagination: paginate(page, total) };
}

export async function findAsset(ds: DataSource, bucket: Bucket, name: string): Promise<Asset> {
  const asset = await ds.getRepository(Asset).findOneBy({ bucket_id: bucket.bucket_id, name });
  if (!asset) throw notFound('Asset');
  return asset;
}

/**
 * Creates the record or bumps `updated_at` (and `size`, when given) of the existing one; creator and
 * creation time stay. The organization is the bucket's. Undefined when the bucket no longer exists.
 */
export async function upsertAsset(
  ds: DataSource,
  bucketId: string,
  name: string,
  actor: string,
  size: number | null = null,
): Promise<Asset | undefined> {
  let rows: Array<Asset & { size: string | null }>;
  try {
    rows = await ds.query(
      `INSERT INTO assets (bucket_id, name, organization_id, size, created_by, created_at, updated_at)
       SELECT bucket_id, $2, organization_id, $3, $4, clock_timestamp(), clock_timestamp() FROM buckets WHERE bucket_id = $1
       ON CONFLICT (bucket_id, name) DO UPDATE SET size = COALESCE(EXCLUDED.size, assets.size), updated_at = EXCLUDED.updated_at
       RETURNING *`,
      [bucketId, name, size, actor],
    );
  } catch (err) {
    // The bucket was deleted between the SELECT and the foreign-key check.
    if ((err as { code?: string }).code === '23503') return undefined;
    throw err;
  }
  const row = rows[0];
  return row && { ...row, size: row.size === null ? null : Number(row.size) };
}

export async function deleteAsset({ ds, blobs }: Stores, asset: Asset): Promise<void> {
  await ds.getRepository(Asset).delete({ bucket_id: asset.bucket_id, name: asset.name });
  await blobs.delete(assetBlobKey(asset.bucket_id, asset.name));
}

// ---- Presigned URLs ----

export type AssetOperation = 'GET' | 'PUT';

/**
 * What a presigned URL allows: the listed operations on one asset name, until `expires` (unix seconds). A URL
 * asked for without an operation allows both: griptape's file manager driver asks that way and then GETs or
 * PUTs (see CreateAssetUrl); an explicit GET or PUT allows that one only.
 */
export interface AssetGrant {
  operations: AssetOperation[];
  bucketId: string;
  name: string;
  expires: number;
  /** Who created the URL; becomes `created_by` when an upload creates the record. */
  actor: string;
}

/** Every signed field, unambiguously delimited (JSON), with a version tag for future formats. */
const signatureOf = (
  box: SecretBox,
  g: { operation: string; bucketId: string; name: string; expires: string; actor: string },
) => box.sign(JSON.stringify(['asset-url-v1', g.operation, g.bucketId, g.name, g.expires, g.actor]));

const encodeAssetName = (name: string) => name.split('/').map(encodeURIComponent).join('/');

export function presignAssetUrl(box: SecretBox, publicBaseUrl: string, grant: AssetGrant): string {
  const expires = String(grant.expires);
  const operation = grant.operations.join(',');
  const query = new URLSearchParams({
    operation,
    expires,
    by: grant.actor,
    signature: signatureOf(box, { ...grant, operation, expires }),
  });
  return `${publicBaseUrl}/api/asset-data/${grant.bucketId}/${encodeAssetName(grant.name)}?${query}`;
}

/**
 * The URL CreateAssetUrl answers. A download-only grant is a URL of the blob store itself when it has its own
 * (S3: the client downloads directly, same expiry); everything else is this api's URL. Uploads always pass
 * through the api: it enforces MAX_ASSET_BYTES and records the asset with its size, which a direct upload to
 * the store could do neither of (and a GET,PUT grant cannot be one SigV4 URL).
 */
export async function assetUrl(blobs: BlobStore, box: SecretBox, publicBaseUrl: string, grant: AssetGrant) {
  if (blobs.presignedUrl && grant.operations.length === 1 && grant.operations[0] === 'GET') {
    return blobs.presignedUrl(assetBlobKey(grant.bucketId, grant.name), 'GET', grant.expires);
  }
  return presignAssetUrl(box, publicBaseUrl, grant);
}

/** Checks signature, method and expiry of a presigned URL; 403 with the reason otherwise. */
export function verifyAssetUrl(
  box: SecretBox,
  target: { bucketId: string; name: string; method: string },
  query: { operation?: string; expires?: string; by?: string; signature?: string },
  nowSeconds = Math.floor(Date.now() / 1000),
): AssetGrant {
  const { operation, expires, by: actor, signature } = query;
  if (!operation || !expires || !actor || !signature) {
    throw forbidden('This URL is not presigned; create one with POST /api/buckets/{bucket_id}/asset-urls/{name}');
  }
  const expected = Buffer.from(
    signatureOf(box, { operation, bucketId: target.bucketId, name: target.name, expires, actor }),
  );
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw forbidden('The URL signature is invalid: the URL was altered or not issued by this installation');
  }
  const operations = operation.split(',') as AssetOperation[];
  if (!operations.includes(target.method as AssetOperation))
    throw forbidden(`This URL was signed for ${operation}, not ${target.method}`);
  // Unix seconds as issued (the signature covers the text): `NaN`, `Infinity`, `1e309` or 40 digits are no expiry.
  if (!/^\d{1,12}$/.test(expires)) throw forbidden("The URL's expiry is malformed");
  const expiresAt = Number(expires);
  if (expiresAt < nowSeconds) throw forbidden(`This URL expired at ${new Date(expiresAt * 1000).toISOString()}`);
  return { operations, bucketId: target.bucketId, name: target.name, expires: expiresAt, actor };
}

// ---- Bytes ----

class UploadAbortedError extends Error {}

/**
 * The request behind a PassThrough: when the blob store gives up (too large) it destroys this stream,
 * not the socket, so the client still receives the 413. A client that disconnects ends it with an error.
 */
function detach(req: Readable): Readable {
  const out = new PassThrough();
  req.on('error', () => out.destroy(new UploadAbortedError()));
  req.on('close', () => {
    if (!req.readableEnded) out.destroy(new UploadAbortedError());
  });
  return req.pipe(out);
}

async function bucketById(ds: DataSource, bucketId: string): Promise<Bucket> {
  const bucket = await ds.getRepository(Bucket).findOneBy({ bucket_id: bucketId });
  if (!bucket) throw notFound('Bucket');
  return bucket;
}

/** Streams an upload into the blob store (at most `maxBytes`), then records the asset with its size. */
export async function uploadAssetData(
  { ds, blobs }: Stores,
  grant: AssetGrant,
  upload: { body: Readable; declaredLength?: number },
  maxBytes: number,
): Promise<Asset> {
  // No point reading a body the client already says is too large.
  if (upload.declaredLength !== undefined && upload.declaredLength > maxBytes) throw payloadTooLarge(maxBytes);
  await bucketById(ds, grant.bucketId);
  const key = assetBlobKey(grant.bucketId, grant.name);
  let size: number;
  try {
    ({ size } = await blobs.put(key, detach(upload.body), maxBytes));
  } catch (err) {
    if (err instanceof BlobTooLargeError) throw payloadTooLarge(maxBytes);
    if (err instanceof UploadAbortedError) throw badRequest('The upload ended before the whole body arrived', '/body');
    throw err;
  }
  const asset = await upsertAsset(ds, grant.bucketId, grant.name, grant.actor, size);
  if (!asset) {
    // The bucket was deleted while the bytes were arriving: do not leave them behind.
    await blobs.delete(key);
    throw notFound('Bucket');
  }
  return asset;
}

/** The stored bytes of an asset; 404 when the bucket, the record or the bytes are missing. */
export async function openAssetData({ ds, blobs }: Stores, grant: AssetGrant) {
  const bucket = await bucketById(ds, grant.bucketId);
  await findAsset(ds, bucket, grant.name);
  const blob = await blobs.get(assetBlobKey(grant.bucketId, grant.name));
  if (!blob) throw notFound('Asset data (nothing was uploaded yet)');
  return blob;
}
