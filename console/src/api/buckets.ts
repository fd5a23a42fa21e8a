// Buckets and their assets: the list, one bucket, a new one, its assets (narrowed by a name prefix), the delete
// of one, and the presigned URLs the bytes move through (POST .../asset-urls/{name}): an upload is a PUT of the
// file to its URL, a download link its GET URL, made when asked for since they expire.
import { api, data } from './client';

export const listBuckets = (page: number) =>
  data(api.GET('/api/buckets', { params: { query: { page, page_size: 25 } } }));

export const getBucket = (id: string) =>
  data(api.GET('/api/buckets/{bucket_id}', { params: { path: { bucket_id: id } } }));

export const createBucket = (name: string) => data(api.POST('/api/buckets', { body: { name } }));

export const listAssets = (id: string, page: number, prefix: string) =>
  data(
    api.GET('/api/buckets/{bucket_id}/assets', {
      params: { path: { bucket_id: id }, query: { page, page_size: 50, ...(prefix ? { prefix } : {}) } },
    }),
  );

export const deleteAsset = (id: string, name: string) =>
  data(api.DELETE('/api/buckets/{bucket_id}/assets/{name}', { params: { path: { bucket_id: id, name } } }));

export const assetUrl = (id: string, name: string, operation: 'GET' | 'PUT') =>
  data(
    api.POST('/api/buckets/{bucket_id}/asset-urls/{name}', {
      params: { path: { bucket_id: id, name } },
      body: { operation },
    }),
  );

/** `file` as the asset `name`, through a presigned PUT URL. */
export async function uploadAsset(id: string, name: string, file: File): Promise<void> {
  const url = await assetUrl(id, name, 'PUT');
  // The presigned URL is not an API route with a body schema: its bytes go as they are.
  const put = await fetch(url.url, { method: 'PUT', body: file, headers: url.headers as Record<string, string> });
  if (!put.ok) throw new Error(`upload of ${name}: HTTP ${put.status}`);
}
