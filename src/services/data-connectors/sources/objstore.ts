// The `objstore` source: objects of any S3-compatible store, named by `s3://bucket/key` (one object) and
// `s3://bucket/prefix/` (every object under the prefix; `s3://bucket` or `s3://bucket/` is the whole bucket).
// Version = the object's ETag. Reads ask for a byte range one past the cap, so a huge object is never
// downloaded past the cap. Config members beyond the interface's (docs/data-connectors.md):
// `objstore_endpoint` (default AWS), `objstore_region` (default us-east-1), `objstore_force_path_style`.
import http from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';
import { GetObjectCommand, ListObjectsV2Command, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { OutboundRefused, type OutboundPolicy } from '../../../security/outbound-policy';
import type { ConnectorSource, SourceContent, SourceContext, SourceItem, SourceItemError } from './source';
import { itemError, safeSegment, SourceError, SourceUnavailableError, toItemError, tooLarge } from './source-error';

export interface ObjstoreConfig {
  objstore_access_key_id: string;
  objstore_secret_access_key: string;
  uris: string[];
  objstore_endpoint?: string;
  objstore_region?: string;
  objstore_force_path_style?: boolean;
}

export interface ObjstoreDeps {
  /**
   * The outbound address policy (SSRF): the endpoint is checked once per listing, before the first request,
   * and every connection of the client goes to an address the policy checked (its agents' lookup hook).
   */
  policy?: OutboundPolicy;
}

const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

export interface S3Uri {
  bucket: string;
  /** The key, or the prefix when `isPrefix` (`''` for the whole bucket). */
  key: string;
  isPrefix: boolean;
}

/** `s3://bucket/key`, `s3://bucket/prefix/`, `s3://bucket`; undefined when not of these forms. */
export function parseS3Uri(uri: string): S3Uri | undefined {
  const m = /^s3:\/\/([^/]+)(?:\/(.*))?$/s.exec(uri);
  if (!m || !BUCKET.test(m[1])) return undefined;
  const key = m[2] ?? '';
  return { bucket: m[1], key, isPrefix: key === '' || key.endsWith('/') };
}

const DEFAULT_REGION = 'us-east-1';

export function objstoreSource(config: ObjstoreConfig, deps: ObjstoreDeps = {}): ConnectorSource {
  let endpoint: URL | undefined;
  if (config.objstore_endpoint !== undefined) {
    try {
      endpoint = new URL(config.objstore_endpoint);
    } catch {
      // refused below
    }
    if (!endpoint || !['http:', 'https:'].includes(endpoint.protocol)) {
      throw new SourceError('InvalidConfig', `objstore_endpoint must be an http(s) URL`);
    }
  }
  const endpointPort = endpoint ? Number(endpoint.port) || (endpoint.protocol === 'http:' ? 80 : 443) : 443;
  const lookup = deps.policy?.lookup(endpointPort);
  const client = new S3Client({
    endpoint: endpoint?.toString(),
    ...(lookup
      ? {
          requestHandler: {
            httpAgent: new http.Agent({ keepAlive: true, lookup }),
            httpsAgent: new https.Agent({ keepAlive: true, lookup }),
          },
        }
      : {}),
    region: config.objstore_region || DEFAULT_REGION,
    forcePathStyle: config.objstore_force_path_style ?? false,
    credentials: {
      accessKeyId: config.objstore_access_key_id,
      secretAccessKey: config.objstore_secret_access_key,
    },
    // Many S3-compatible stores refuse or mangle the newer default checksum headers.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 3,
  });

  const toItem = (bucket: string, key: string, etag: string | undefined, size: number | undefined) => {
    const item: SourceItem = {
      path: [bucket, ...key.split('/').filter(Boolean)].map((s, i) => safeSegment(s, `_${i}`)).join('/'),
      sourceUri: `s3://${bucket}/${key}`,
      title: key.split('/').filter(Boolean).pop() ?? key,
      version: etag?.replace(/^"|"$/g, ''),
      meta: size === undefined ? {} : { size: String(size) },
    };
    return item;
  };

  /** One object's listing: a 1-byte ranged GET (unlike HEAD, an error answer has a body naming the error). */
  async function probe(bucket: string, key: string, ctx: SourceContext): Promise<SourceItem | SourceItemError> {
    const uri = `s3://${bucket}/${key}`;
    try {
      const res = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key, Range: 'bytes=0-0' }), {
        abortSignal: ctx.signal,
      });
      (res.Body as Readable | undefined)?.destroy();
      const size = totalOfRange(res.ContentRange) ?? res.ContentLength;
      if (size !== undefined && size > ctx.maxItemBytes) return toItemError(uri, tooLarge(uri, ctx.maxItemBytes));
      return toItem(bucket, key, res.ETag, size);
    } catch (err) {
      // An empty object has no byte 0: read in full later.
      if (statusOf(err) === 416) return toItem(bucket, key, undefined, 0);
      return classify(err, uri);
    }
  }

  return {
    async *list(ctx) {
      // An address in the endpoint is connected to without a lookup: checked here (a name is checked again
      // by the lookup hook at every connection).
      if (endpoint && deps.policy) {
        await deps.policy.resolve(endpoint.hostname, endpointPort).catch((err: unknown) => {
          throw err instanceof OutboundRefused ? new SourceUnavailableError(err.type, err.message) : err;
        });
      }
      const seen = new Set<string>();
      for (const uri of config.uris) {
        const parsed = parseS3Uri(uri);
        if (!parsed) {
          yield itemError(
            uri,
            'InvalidUri',
            `${JSON.stringify(uri)} is not of the form s3://bucket/key or s3://bucket/prefix/`,
          );
          continue;
        }
        if (!parsed.isPrefix) {
          if (seen.has(uri)) continue;
          seen.add(uri);
          yield await probe(parsed.bucket, parsed.key, ctx);
          continue;
        }
        let token: string | undefined;
        try {
          do {
            const page = await client.send(
              new ListObjectsV2Command({ Bucket: parsed.bucket, Prefix: parsed.key, ContinuationToken: token }),
              { abortSignal: ctx.signal },
            );
            for (const o of page.Contents ?? []) {
              if (!o.Key || o.Key.endsWith('/')) continue; // "folder" placeholders
              const item = toItem(parsed.bucket, o.Key, o.ETag, o.Size);
              if (seen.has(item.sourceUri)) continue;
              seen.add(item.sourceUri);
              yield (o.Size ?? 0) > ctx.maxItemBytes
                ? toItemError(item.sourceUri, tooLarge(item.sourceUri, ctx.maxItemBytes))
                : item;
            }
            token = page.IsTruncated ? page.NextContinuationToken : undefined;
            ctx.progress(`listed ${seen.size} objects`);
          } while (token);
        } catch (err) {
          yield classify(err, uri);
        }
      }
    },

    async read(item, ctx): Promise<SourceContent> {
      const parsed = parseS3Uri(item.sourceUri);
      if (!parsed || parsed.isPrefix) throw new SourceError('InvalidUri', `${item.sourceUri} names no object`);
      const get = (range: boolean) =>
        client.send(
          new GetObjectCommand({
            Bucket: parsed.bucket,
            Key: parsed.key,
            // One byte past the cap: enough to tell an object over the cap without downloading the rest.
            Range: range ? `bytes=0-${ctx.maxItemBytes}` : undefined,
          }),
          { abortSignal: ctx.signal },
        );
      let res;
      try {
        res = await get(true).catch((err: unknown) => (statusOf(err) === 416 ? get(false) : Promise.reject(err)));
      } catch (err) {
        const e = classify(err, item.sourceUri);
        throw new SourceError(e.type, e.message);
      }
      const body = res.Body as Readable | undefined;
      const total = totalOfRange(res.ContentRange) ?? res.ContentLength ?? 0;
      if (total > ctx.maxItemBytes) {
        body?.destroy();
        throw tooLarge(item.sourceUri, ctx.maxItemBytes);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of body ?? []) {
        size += (chunk as Buffer).length;
        if (size > ctx.maxItemBytes) {
          body?.destroy();
          throw tooLarge(item.sourceUri, ctx.maxItemBytes);
        }
        chunks.push(chunk as Buffer);
      }
      return {
        body: Buffer.concat(chunks, size),
        contentType: res.ContentType || 'application/octet-stream',
        version: res.ETag?.replace(/^"|"$/g, ''),
      };
    },
  };
}

/** `bytes 0-0/1234` → 1234. */
function totalOfRange(range: string | undefined): number | undefined {
  const m = range && /\/(\d+)$/.exec(range);
  return m ? Number(m[1]) : undefined;
}

const statusOf = (err: unknown) => (err as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;

/** Codes that mean the connector's credentials are refused: nothing can be listed with them. */
const CREDENTIALS_REFUSED = new Set(['InvalidAccessKeyId', 'SignatureDoesNotMatch', 'InvalidToken', 'ExpiredToken']);

/**
 * One URI's failure as an item error; refused credentials, an unreachable endpoint and cancellation are thrown
 * (the whole listing fails).
 */
function classify(err: unknown, uri: string): SourceItemError {
  if (err instanceof SourceError) return toItemError(uri, err);
  if (err instanceof OutboundRefused) throw new SourceUnavailableError(err.type, err.message);
  if (!(err instanceof S3ServiceException)) {
    // No answer at all (connection refused, DNS, TLS) or aborted: no URI can be read.
    if ((err as Error)?.name === 'AbortError') throw err;
    throw new SourceUnavailableError(
      'Unreachable',
      `the object store did not answer: ${(err as Error)?.message ?? err}`,
    );
  }
  if (CREDENTIALS_REFUSED.has(err.name)) {
    throw new SourceUnavailableError(
      'Unauthorized',
      `the object store refused the credentials (${err.name}): check objstore_access_key_id and objstore_secret_access_key`,
    );
  }
  const status = statusOf(err);
  if (status === 403) return itemError(uri, 'Forbidden', `${uri}: access denied by the object store (${err.name})`);
  if (status === 404)
    return itemError(uri, 'NotFound', `${uri}: no such ${err.name === 'NoSuchBucket' ? 'bucket' : 'object'}`);
  return itemError(uri, 'FetchFailed', `${uri}: ${err.name} (HTTP ${status ?? '?'}): ${err.message}`);
}
