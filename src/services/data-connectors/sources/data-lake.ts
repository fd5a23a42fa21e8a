// The `data_lake` source: copies assets of one of the organization's buckets (`bucket_id`), all of them or
// those `asset_paths` name (an asset name, or a prefix ending in `/`). Another organization's bucket lists
// nothing (the connector's checks refuse it at create; this holds if it changed hands since). The
// connector's own prefix is never read back (a connector over its own bucket would copy its copies).
import { assetBlobKey } from '../../../blobs/keys';
import { likeEscape } from '../../../persistence/scoped';
import type { SourceFactory } from './source';
import type { SourceContent, SourceItem, SourceItemError } from './source';

export const dataLakeSource: SourceFactory = (config, deps) => {
  const bucketId = String(config.bucket_id);
  const paths = (config.asset_paths as string[] | undefined)?.length ? (config.asset_paths as string[]) : [''];
  const ownPrefix = `data-connectors/${deps.connector.data_connector_id}/`;
  return {
    async *list(ctx) {
      const rows: Array<{ name: string; size: string; updated_at: Date; meta: Record<string, string> | null }> =
        await deps.ds.query(
          `SELECT a.name, a.size, a.updated_at, a.meta FROM assets a JOIN buckets b ON b.bucket_id = a.bucket_id
           WHERE a.bucket_id = $1 AND b.organization_id = $2 AND a.size IS NOT NULL
             AND (a.name = ANY($3::text[]) OR EXISTS (SELECT 1 FROM unnest($4::text[]) p WHERE a.name LIKE p ESCAPE '\\'))
             AND NOT (a.bucket_id = $5 AND a.name LIKE $6 ESCAPE '\\')
           ORDER BY a.name`,
          [
            bucketId,
            deps.connector.organization_id,
            paths.filter((p) => p !== '' && !p.endsWith('/')),
            paths.filter((p) => p === '' || p.endsWith('/')).map((p) => `${likeEscape(p)}%`),
            deps.connector.bucket_id,
            `${likeEscape(ownPrefix)}%`,
          ],
        );
      const found = new Set(rows.map((r) => r.name));
      for (const p of paths) {
        if (p !== '' && !p.endsWith('/') && !found.has(p))
          yield { error: true, type: 'NotFound', message: `No uploaded asset ${p} in bucket ${bucketId}`, path: p };
      }
      for (const r of rows) {
        ctx.progress(r.name);
        yield {
          path: r.name,
          sourceUri: `data_lake://${bucketId}/${r.name}`,
          version: `${r.size}:${new Date(r.updated_at).toISOString()}`,
          ...(r.meta?.title ? { title: r.meta.title } : {}),
        } satisfies SourceItem | SourceItemError;
      }
    },

    async read(item, ctx): Promise<SourceContent> {
      const blob = await deps.blobs.get(assetBlobKey(bucketId, item.path));
      if (!blob) throw Object.assign(new Error(`The bytes of ${item.path} are missing`), { type: 'NotFound' });
      if (blob.size > ctx.maxItemBytes) {
        blob.stream.destroy();
        throw Object.assign(new Error(`${item.path} is larger than ${ctx.maxItemBytes} bytes`), { type: 'TooLarge' });
      }
      const parts: Buffer[] = [];
      for await (const part of blob.stream) parts.push(part as Buffer);
      const body = Buffer.concat(parts);
      return { body, contentType: contentTypeOf(item.path) };
    },
  };
};

const TYPES: Record<string, string> = {
  txt: 'text/plain',
  md: 'text/markdown',
  html: 'text/html',
  htm: 'text/html',
  json: 'application/json',
  csv: 'text/csv',
  pdf: 'application/pdf',
  xml: 'application/xml',
};

/** A media type from the name's extension (application/octet-stream when unknown). */
export function contentTypeOf(name: string): string {
  const ext = /\.([A-Za-z0-9]+)$/.exec(name)?.[1]?.toLowerCase();
  return (ext && TYPES[ext]) || 'application/octet-stream';
}
