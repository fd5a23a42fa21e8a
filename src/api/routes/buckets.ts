// Buckets and assets (the data lake). Asset names may contain `/` and arrive unencoded in paths.
// Bytes move through presigned URLs (CreateAssetUrl) served by the asset-data routes below.
import type { Context } from 'koa';
import { Asset, Bucket } from '../../persistence/entities';
import { iso } from '../../persistence/scoped';
import type { SecretBox } from '../../security/secret-box';
import {
  ASSET_NAME_PATTERN,
  createBucket,
  deleteAsset,
  deleteBucket,
  findAsset,
  findBucket,
  listAssets,
  listBuckets,
  MAX_ASSET_NAME,
  MAX_BUCKET_NAME,
  openAssetData,
  assetUrl,
  updateBucket,
  uploadAssetData,
  upsertAsset,
  verifyAssetUrl,
} from '../../services/storage/buckets';
import { notFound } from '../../errors';
import { route } from '../http/route';
import { defineSchema, pageOf, str, timestamp, uuid } from '../schemas/registry';

const TAG = 'Buckets and assets';

const BucketSchema = defineSchema('Bucket', {
  type: 'object',
  required: ['bucket_id', 'name', 'organization_id', 'created_by', 'created_at', 'updated_at'],
  properties: {
    bucket_id: uuid,
    name: { type: 'string' },
    organization_id: uuid,
    created_by: { type: 'string' },
    created_at: timestamp,
    updated_at: timestamp,
  },
});
const AssetSchema = defineSchema('Asset', {
  type: 'object',
  required: ['name', 'bucket_id', 'organization_id', 'created_by', 'created_at', 'updated_at'],
  properties: {
    name: { type: 'string' },
    bucket_id: uuid,
    organization_id: uuid,
    size: { type: 'integer', minimum: 0, description: 'Bytes stored; absent until data has been uploaded.' },
    created_by: { type: 'string' },
    created_at: timestamp,
    updated_at: timestamp,
  },
});
const AssetList = pageOf('AssetList', 'assets', AssetSchema, {
  prefix: { type: 'string' },
  postfix: { type: 'string' },
});
const AssetUrlSchema = defineSchema('AssetUrl', {
  type: 'object',
  required: ['url', 'headers'],
  properties: {
    url: { type: 'string', format: 'uri' },
    headers: {
      type: 'object',
      additionalProperties: { type: 'string' },
      description: 'Headers to send with the request to `url`.',
    },
  },
});

const presentBucket = (b: Bucket) => ({
  bucket_id: b.bucket_id,
  name: b.name,
  organization_id: b.organization_id,
  created_by: b.created_by,
  created_at: iso(b.created_at),
  updated_at: iso(b.updated_at),
});
const presentAsset = (a: Asset) => ({
  name: a.name,
  bucket_id: a.bucket_id,
  organization_id: a.organization_id,
  ...(a.size !== null ? { size: a.size } : {}),
  created_by: a.created_by,
  created_at: iso(a.created_at),
  updated_at: iso(a.updated_at),
});

const bucketName = str(1, MAX_BUCKET_NAME);
/** Also the `asset_path` of data lake code locations. */
export const assetName = {
  ...str(1, MAX_ASSET_NAME),
  pattern: ASSET_NAME_PATTERN,
  description:
    'an asset name: `/` separates folders; no leading, trailing or doubled `/`, no `.` or `..` segments, no backslashes or control characters',
};
const assetPath = { bucket_id: uuid, name: assetName };

route({
  operationId: 'ListBuckets',
  method: 'get',
  path: '/buckets',
  tag: TAG,
  paged: true,
  summary: "The organization's buckets, newest first.",
  responses: { 200: { description: 'Buckets', schema: pageOf('BucketList', 'buckets', BucketSchema) } },
  handler: async ({ deps, caller, page }) => {
    const { items, pagination } = await listBuckets(deps.ds, caller, page);
    return { status: 200, body: { buckets: items.map(presentBucket), pagination } };
  },
});

route({
  operationId: 'CreateBucket',
  method: 'post',
  path: '/buckets',
  tag: TAG,
  summary: `Creates a bucket (name 1 to ${MAX_BUCKET_NAME} characters, not unique).`,
  body: defineSchema('CreateBucketRequest', { type: 'object', required: ['name'], properties: { name: bucketName } }),
  bodyRequired: true,
  responses: { 201: { description: 'Bucket', schema: BucketSchema } },
  handler: async ({ deps, caller, body }) => ({
    status: 201,
    body: presentBucket(await createBucket(deps.ds, caller, body.name)),
  }),
});

route({
  operationId: 'GetBucket',
  method: 'get',
  path: '/buckets/{bucket_id}',
  tag: TAG,
  summary: 'A bucket.',
  params: { bucket_id: uuid },
  responses: { 200: { description: 'Bucket', schema: BucketSchema } },
  handler: async ({ deps, caller, params }) => ({
    status: 200,
    body: presentBucket(await findBucket(deps.ds, caller, params.bucket_id)),
  }),
});

route({
  operationId: 'UpdateBucket',
  method: 'patch',
  path: '/buckets/{bucket_id}',
  tag: TAG,
  summary: 'Renames a bucket.',
  params: { bucket_id: uuid },
  body: defineSchema('UpdateBucketRequest', { type: 'object', properties: { name: bucketName } }),
  responses: { 200: { description: 'Bucket', schema: BucketSchema } },
  handler: async ({ deps, caller, params, body }) => {
    const bucket = await findBucket(deps.ds, caller, params.bucket_id);
    return { status: 200, body: presentBucket(await updateBucket(deps.ds, bucket, body)) };
  },
});

route({
  operationId: 'DeleteBucket',
  method: 'delete',
  path: '/buckets/{bucket_id}',
  tag: TAG,
  summary:
    'Deletes a bucket with all its assets and their data. Presigned URLs for it answer 404 from then on. ' +
    "The organization's default bucket (`default_bucket_id`) cannot be deleted (409).",
  params: { bucket_id: uuid },
  responses: { 204: { description: 'Deleted' } },
  handler: async ({ deps, caller, params }) => {
    await deleteBucket(deps, await findBucket(deps.ds, caller, params.bucket_id));
    return { status: 204 };
  },
});

route({
  operationId: 'ListAssets',
  method: 'get',
  path: '/buckets/{bucket_id}/assets',
  tag: TAG,
  paged: true,
  summary:
    'Assets of a bucket, by name. `prefix` and `postfix` match the start and end of names literally (`%` and `_` are ordinary characters); both given means both must match.',
  params: { bucket_id: uuid },
  query: { prefix: str(0, MAX_ASSET_NAME), postfix: str(0, MAX_ASSET_NAME) },
  responses: { 200: { description: 'Assets', schema: AssetList } },
  handler: async ({ deps, caller, params, query, page }) => {
    const bucket = await findBucket(deps.ds, caller, params.bucket_id);
    const { items, pagination } = await listAssets(deps.ds, bucket, page, query);
    return {
      status: 200,
      body: {
        assets: items.map(presentAsset),
        pagination,
        ...(query.prefix !== undefined ? { prefix: query.prefix } : {}),
        ...(query.postfix !== undefined ? { postfix: query.postfix } : {}),
      },
    };
  },
});

route({
  operationId: 'CreateAsset',
  method: 'put',
  path: '/buckets/{bucket_id}/assets',
  tag: TAG,
  summary: `Creates the asset record, or bumps \`updated_at\` of an existing one with that name (upsert). Upload the bytes with a PUT asset URL. Names: 1 to ${MAX_ASSET_NAME} characters, \`/\` separates folders; no leading \`/\`, empty, \`.\` or \`..\` segments, backslashes or control characters.`,
  params: { bucket_id: uuid },
  body: defineSchema('CreateAssetRequest', { type: 'object', required: ['name'], properties: { name: assetName } }),
  bodyRequired: true,
  responses: { 201: { description: 'Asset', schema: AssetSchema } },
  handler: async ({ deps, caller, params, body }) => {
    const { name } = body;
    const bucket = await findBucket(deps.ds, caller, params.bucket_id);
    const asset = await upsertAsset(deps.ds, bucket.bucket_id, name, caller.actor);
    if (!asset) throw notFound('Bucket');
    return { status: 201, body: presentAsset(asset) };
  },
});

route({
  operationId: 'GetAsset',
  method: 'get',
  path: '/buckets/{bucket_id}/assets/{name}',
  greedyParam: 'name',
  tag: TAG,
  summary: 'An asset record (its bytes: CreateAssetUrl with GET).',
  params: assetPath,
  responses: { 200: { description: 'Asset', schema: AssetSchema } },
  handler: async ({ deps, caller, params }) => {
    const { name } = params;
    const bucket = await findBucket(deps.ds, caller, params.bucket_id);
    return { status: 200, body: presentAsset(await findAsset(deps.ds, bucket, name)) };
  },
});

route({
  operationId: 'DeleteAsset',
  method: 'delete',
  path: '/buckets/{bucket_id}/assets/{name}',
  greedyParam: 'name',
  tag: TAG,
  summary: 'Deletes an asset record and its bytes.',
  params: assetPath,
  responses: { 204: { description: 'Deleted' } },
  handler: async ({ deps, caller, params }) => {
    const { name } = params;
    const bucket = await findBucket(deps.ds, caller, params.bucket_id);
    await deleteAsset(deps, await findAsset(deps.ds, bucket, name));
    return { status: 204 };
  },
});

route({
  operationId: 'CreateAssetUrl',
  method: 'post',
  path: '/buckets/{bucket_id}/asset-urls/{name}',
  greedyParam: 'name',
  tag: TAG,
  summary:
    'A presigned URL to download (`operation: GET`) or upload (`PUT`) the bytes of an asset with plain HTTP and no API key: ' +
    '`/api/asset-data/{bucket_id}/{name}?operation=&expires=&by=&signature=`, valid for ASSET_URL_TTL_SECONDS (default 3600 s). ' +
    "Without `operation` the URL allows both GET and PUT: griptape's file manager driver asks without one, then downloads or uploads. " +
    'When blobs live in an S3-compatible store (BLOB_STORE=s3), a GET URL is a presigned URL of the store itself, with the same expiry. ' +
    'Send `headers` with the request. Uploads are limited to MAX_ASSET_BYTES (default 1 GiB) and create the asset record if needed. ' +
    'A GET URL may be created for an asset without data; using it answers 404.',
  params: assetPath,
  body: defineSchema('CreateAssetUrlRequest', {
    type: 'object',
    properties: {
      operation: { type: 'string', enum: ['GET', 'PUT'], description: 'Omitted: a URL for both GET and PUT.' },
    },
  }),
  responses: { 200: { description: 'Presigned URL', schema: AssetUrlSchema } },
  handler: async ({ deps, caller, params, body }) => {
    const { name } = params;
    const bucket = await findBucket(deps.ds, caller, params.bucket_id);
    const url = await assetUrl(deps.blobs, deps.box, deps.config.publicBaseUrl, {
      operations: body.operation ? [body.operation] : ['GET', 'PUT'],
      bucketId: bucket.bucket_id,
      name,
      actor: caller.actor,
      expires: Math.floor(Date.now() / 1000) + deps.config.assetUrlTtlSeconds,
    });
    return { status: 200, body: { url, headers: {} } };
  },
});

// ---- The presigned URLs themselves: the signature authenticates, not an API key ----

const signedQuery = {
  operation: {
    type: 'string',
    enum: ['GET', 'PUT', 'GET,PUT'],
    description: 'The methods this URL allows: GET, PUT, or GET,PUT (asked for without an operation).',
  },
  expires: { type: 'string', pattern: '^[0-9]{1,12}$', description: 'Unix seconds after which the URL answers 403.' },
  by: { type: 'string', description: 'Who created the URL.' },
  signature: { type: 'string', description: 'HMAC-SHA256 over method, bucket, name, expiry and creator.' },
};

function grantFor(
  ctx: Context,
  box: SecretBox,
  params: Record<string, string>,
  query: Record<string, string | undefined>,
) {
  const { name } = params;
  // HEAD asks what GET would answer.
  const method = ctx.method === 'HEAD' ? 'GET' : ctx.method;
  return verifyAssetUrl(box, { bucketId: params.bucket_id, name, method }, query);
}

route({
  operationId: 'DownloadAssetData',
  method: 'get',
  path: '/asset-data/{bucket_id}/{name}',
  greedyParam: 'name',
  tag: TAG,
  auth: 'none',
  summary:
    'Downloads the bytes of an asset through a presigned GET URL (from CreateAssetUrl). 403 when the signature is invalid, the URL is for another method or has expired; 404 when the bucket, the asset or its data is gone.',
  params: assetPath,
  query: signedQuery,
  responses: {
    200: {
      description: 'The bytes',
      contentType: 'application/octet-stream',
      schema: { type: 'string', contentMediaType: 'application/octet-stream' },
    },
  },
  handler: async ({ ctx, deps, params, query }) => {
    const blob = await openAssetData(deps, grantFor(ctx, deps.box, params, query));
    ctx.status = 200;
    ctx.type = 'application/octet-stream';
    ctx.length = blob.size;
    // HEAD never reads the stream: close it so its file handle is not left open.
    if (ctx.method === 'HEAD') blob.stream.destroy();
    else ctx.body = blob.stream;
  },
});

route({
  operationId: 'UploadAssetData',
  needsDiskSpace: true,
  method: 'put',
  path: '/asset-data/{bucket_id}/{name}',
  greedyParam: 'name',
  tag: TAG,
  auth: 'none',
  summary:
    'Uploads the bytes of an asset through a presigned PUT URL (from CreateAssetUrl), replacing earlier bytes, and records the asset with its `size`. At most MAX_ASSET_BYTES (default 1 GiB; 413 beyond). 403 when the signature is invalid, the URL is for another method or has expired; 404 when the bucket is gone.',
  params: assetPath,
  query: signedQuery,
  rawBody: {
    contentType: 'application/octet-stream',
    description: 'The bytes of the asset (any content type is accepted).',
  },
  responses: { 200: { description: 'The asset record', schema: AssetSchema } },
  handler: async ({ ctx, deps, params, query }) => {
    try {
      const grant = grantFor(ctx, deps.box, params, query);
      const length = ctx.get('content-length');
      const asset = await uploadAssetData(
        deps,
        grant,
        { body: ctx.req, declaredLength: length ? Number(length) : undefined },
        deps.config.maxAssetBytes,
      );
      return { status: 200, body: presentAsset(asset) };
    } catch (err) {
      // Refused before the body was read: close the connection rather than drain a possibly huge upload.
      if (!ctx.req.readableEnded) ctx.set('Connection', 'close');
      throw err;
    }
  },
});
