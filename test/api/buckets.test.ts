import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import { createApp } from '../../src/api/app';
import { FsBlobStore } from '../../src/blobs/fs-blob-store';
import { assetBlobKey } from '../../src/blobs/keys';
import { createLogger } from '../../src/logger';
import { presignAssetUrl } from '../../src/services/storage/buckets';
import { as, request } from '../support/client';
import { getStack, newTenant } from '../support/stack';

/** A tenant with one bucket, and its API shorthands. */
async function tenantWithBucket(name = 'files') {
  const t = await newTenant('buckets');
  const api = as(t.key);
  const bucket = await api.post('/api/buckets', { name });
  expect(bucket.status).to.equal(201);
  return { t, api, bucketId: bucket.body.bucket_id as string };
}

/** Plain fetch for bytes (the test client decodes bodies as text). */
async function download(url: string): Promise<{ status: number; bytes: Buffer; headers: Headers; json?: any }> {
  const res = await fetch(url);
  const bytes = Buffer.from(await res.arrayBuffer());
  const json = (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(bytes.toString()) : undefined;
  return { status: res.status, bytes, headers: res.headers, json };
}

/** node:http, for what fetch will not send: a Content-Length without its body, or a chunked body. */
function rawPut(url: string, headers: Record<string, string>, body?: Buffer): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'PUT', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        req.destroy();
        resolve({ status: res.statusCode!, json: JSON.parse(Buffer.concat(chunks).toString()) });
      });
    });
    req.on('error', reject);
    if (body) req.end(body);
    else req.flushHeaders();
  });
}

/** A second api process on the same stack with a small upload limit, to reach the streaming limit. */
async function apiWithAssetLimit(maxAssetBytes: number) {
  const s = getStack();
  const app = createApp({
    config: { ...s.config, maxAssetBytes },
    ds: s.ds,
    temporal: s.env.client,
    blobs: new FsBlobStore(s.config.blobDir),
    box: s.box,
    log: createLogger('silent', 'test-small-api'),
  });
  const server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const blobFile = (bucketId: string, name: string) => path.join(getStack().config.blobDir, assetBlobKey(bucketId, name));

describe('buckets and assets', () => {
  it('creates, lists with pagination, gets, renames and deletes buckets', async () => {
    const t = await newTenant('buckets');
    const api = as(t.key);
    const ids: string[] = [];
    for (const name of ['one', 'two', 'three']) {
      const created = await api.post('/api/buckets', { name });
      expect(created.status).to.equal(201);
      expect(created.body).to.include({ name, organization_id: t.organizationId, created_by: t.userId });
      ids.push(created.body.bucket_id);
    }
    // The organization's default bucket, created with it, is the oldest.
    const defaultBucket = (await api.get(`/api/organizations/${t.organizationId}`)).body.default_bucket_id;
    const first = await api.get('/api/buckets?page=1&page_size=2');
    expect(first.body.pagination).to.include({
      page_number: 1,
      page_size: 2,
      total_count: 4,
      total_pages: 2,
      next_page: 2,
    });
    const second = await api.get('/api/buckets?page=2&page_size=2');
    expect(second.body.pagination).to.include({ page_number: 2, previous_page: 1 });
    const listed = [...first.body.buckets, ...second.body.buckets].map((b: { bucket_id: string }) => b.bucket_id);
    expect(listed).to.deep.equal([...ids].reverse().concat(defaultBucket)); // newest first

    const got = await api.get(`/api/buckets/${ids[0]}`);
    expect(got.status).to.equal(200);
    expect(got.body.name).to.equal('one');

    const renamed = await api.patch(`/api/buckets/${ids[0]}`, { name: 'uno' });
    expect(renamed.status).to.equal(200);
    expect(renamed.body.name).to.equal('uno');
    expect(renamed.body.updated_at >= got.body.updated_at).to.equal(true);
    expect((await api.get(`/api/buckets/${ids[0]}`)).body.name).to.equal('uno');

    expect((await api.delete(`/api/buckets/${ids[0]}`)).status).to.equal(204);
    const gone = await api.get(`/api/buckets/${ids[0]}`);
    expect(gone.status).to.equal(404);
    expect(gone.body.type).to.equal('NotFoundError');
    expect((await api.get('/api/buckets')).body.pagination.total_count).to.equal(3);
  });

  it('validates bucket names (1..256) and ids', async () => {
    const t = await newTenant('buckets');
    const api = as(t.key);
    expect((await api.post('/api/buckets', { name: 'b'.repeat(256) })).status).to.equal(201);
    const tooLong = await api.post('/api/buckets', { name: 'b'.repeat(257) });
    expect(tooLong.status).to.equal(400);
    expect(tooLong.body.type).to.equal('ValidationError');
    expect((await api.post('/api/buckets', { name: '' })).status).to.equal(400);
    expect((await api.post('/api/buckets', {})).status).to.equal(400);
    const { bucketId } = await tenantWithBucket();
    expect((await api.patch(`/api/buckets/${bucketId}`, { name: 'c'.repeat(257) })).status).to.equal(400);
    const badId = await api.get('/api/buckets/nope/assets');
    expect(badId.status).to.equal(400);
    expect(badId.body.errors[0].path).to.equal('/path/bucket_id');
  });

  it('upserts asset records: a second PUT returns the same record with updated_at bumped', async () => {
    const { t, api, bucketId } = await tenantWithBucket();
    const first = await api.put(`/api/buckets/${bucketId}/assets`, { name: 'notes.txt' });
    expect(first.status).to.equal(201);
    expect(first.body).to.include({
      name: 'notes.txt',
      bucket_id: bucketId,
      organization_id: t.organizationId,
      created_by: t.userId,
    });
    expect(first.body).to.not.have.property('size');
    await new Promise((r) => setTimeout(r, 5));
    const again = await api.put(`/api/buckets/${bucketId}/assets`, { name: 'notes.txt' });
    expect(again.status).to.equal(201);
    expect(again.body.created_at).to.equal(first.body.created_at);
    expect(again.body.created_by).to.equal(first.body.created_by);
    expect(again.body.updated_at > first.body.updated_at).to.equal(true);
    const list = await api.get(`/api/buckets/${bucketId}/assets`);
    expect(list.body.assets).to.have.length(1);
    expect(list.body).to.not.have.property('prefix');

    expect((await api.put(`/api/buckets/${bucketId}/assets`, { name: 'n'.repeat(256) })).status).to.equal(201);
    expect((await api.put(`/api/buckets/${bucketId}/assets`, { name: 'n'.repeat(257) })).status).to.equal(400);
    expect((await api.put(`/api/buckets/${bucketId}/assets`, {})).status).to.equal(400);
  });

  it('accepts names with slashes (unencoded) in GetAsset, DeleteAsset and asset URLs', async () => {
    const { api, bucketId } = await tenantWithBucket();
    for (const name of ['dir/sub/file.txt', 'dir/with space ü.txt']) {
      expect((await api.put(`/api/buckets/${bucketId}/assets`, { name })).status).to.equal(201);
      const got = await api.get(`/api/buckets/${bucketId}/assets/${name}`);
      expect(got.status).to.equal(200);
      expect(got.body.name).to.equal(name);

      const put = await api.post(`/api/buckets/${bucketId}/asset-urls/${name}`, { operation: 'PUT' });
      expect(put.status).to.equal(200);
      expect(put.body.headers).to.deep.equal({});
      const uploaded = await request('PUT', put.body.url, undefined, { raw: `content of ${name}` });
      expect(uploaded.status).to.equal(200);
      expect(uploaded.body).to.include({ name, size: Buffer.byteLength(`content of ${name}`) });
      const get = await api.post(`/api/buckets/${bucketId}/asset-urls/${name}`);
      expect(new URL(get.body.url).pathname.startsWith(`/api/asset-data/${bucketId}/dir/`)).to.equal(true);
      expect((await download(get.body.url)).bytes.toString()).to.equal(`content of ${name}`);

      expect((await api.delete(`/api/buckets/${bucketId}/assets/${name}`)).status).to.equal(204);
      expect((await api.get(`/api/buckets/${bucketId}/assets/${name}`)).status).to.equal(404);
      expect((await download(get.body.url)).status).to.equal(404);
      expect(fs.existsSync(blobFile(bucketId, name))).to.equal(false);
    }
    expect((await api.delete(`/api/buckets/${bucketId}/assets/dir/never`)).status).to.equal(404);
  });

  it('uploads through a presigned PUT URL and downloads identical bytes through a GET URL', async () => {
    const { t, api, bucketId } = await tenantWithBucket();
    // 1 MiB in which every byte value occurs many times, in no simple order.
    const payload = Buffer.alloc(1 << 20);
    for (let i = 0; i < payload.length; i++) payload[i] = (i * 131 + (i >> 8)) & 0xff;
    expect(new Set(payload).size).to.equal(256);

    // No CreateAsset first: the upload creates the record.
    const put = await api.post(`/api/buckets/${bucketId}/asset-urls/data/blob.bin`, { operation: 'PUT' });
    expect(
      put.body.url.startsWith(`${getStack().config.publicBaseUrl}/api/asset-data/${bucketId}/data/blob.bin?`),
    ).to.equal(true);
    const expires = Number(new URL(put.body.url).searchParams.get('expires'));
    expect(expires - Date.now() / 1000).to.be.within(
      getStack().config.assetUrlTtlSeconds - 5,
      getStack().config.assetUrlTtlSeconds + 1,
    );
    const uploaded = await request('PUT', put.body.url, undefined, {
      raw: payload,
      headers: { 'content-type': 'application/octet-stream' },
    });
    expect(uploaded.status).to.equal(200);
    expect(uploaded.body).to.include({
      name: 'data/blob.bin',
      size: payload.length,
      created_by: t.userId,
      organization_id: t.organizationId,
    });
    expect((await api.get(`/api/buckets/${bucketId}/assets/data/blob.bin`)).body.size).to.equal(payload.length);

    const get = await api.post(`/api/buckets/${bucketId}/asset-urls/data/blob.bin`, { operation: 'GET' });
    const res = await download(get.body.url);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('application/octet-stream');
    expect(res.headers.get('content-length')).to.equal(String(payload.length));
    expect(res.bytes.equals(payload)).to.equal(true);
    const head = await fetch(get.body.url, { method: 'HEAD' });
    expect(head.status).to.equal(200);
    expect(head.headers.get('content-length')).to.equal(String(payload.length));

    // A second upload replaces the bytes and the size; CreateAsset afterwards keeps the size.
    expect((await request('PUT', put.body.url, undefined, { raw: Buffer.from([0, 255]) })).body.size).to.equal(2);
    expect((await download(get.body.url)).bytes.equals(Buffer.from([0, 255]))).to.equal(true);
    expect((await api.put(`/api/buckets/${bucketId}/assets`, { name: 'data/blob.bin' })).body.size).to.equal(2);
  });

  it("serves griptape's file manager sequence: a URL asked for without operation uploads and downloads", async () => {
    const { api, bucketId } = await tenantWithBucket();
    // GriptapeCloudFileManagerDriver.save_file: the record, then a URL with no body, then a PUT of the bytes.
    expect((await api.put(`/api/buckets/${bucketId}/assets`, { name: 'work/notes.txt' })).status).to.equal(201);
    const either = await api.post(`/api/buckets/${bucketId}/asset-urls/work/notes.txt`);
    expect(either.status, either.text).to.equal(200);
    expect(new URL(either.body.url).searchParams.get('operation')).to.equal('GET,PUT');
    const put = await request('PUT', either.body.url, undefined, { raw: 'saved', headers: either.body.headers });
    expect(put.status, put.text).to.equal(200);
    // load_file: another URL asked for the same way, then a GET.
    const again = await api.post(`/api/buckets/${bucketId}/asset-urls/work/notes.txt`);
    expect((await download(again.body.url)).bytes.toString()).to.equal('saved');
    expect((await download(either.body.url)).bytes.toString()).to.equal('saved');
    // try_list_files: the assets under the prefix.
    const listed = await api.get(`/api/buckets/${bucketId}/assets?prefix=work`);
    expect(listed.body.assets.map((a: any) => a.name)).to.deep.equal(['work/notes.txt']);
    // An explicit operation still allows that one only.
    const getOnly = await api.post(`/api/buckets/${bucketId}/asset-urls/work/notes.txt`, { operation: 'GET' });
    expect((await request('PUT', getOnly.body.url, undefined, { raw: 'x' })).status).to.equal(403);
  });

  it('answers 404 to downloads of assets without a record or without data', async () => {
    const { api, bucketId } = await tenantWithBucket();
    const missing = await api.post(`/api/buckets/${bucketId}/asset-urls/not/there.txt`);
    expect(missing.status).to.equal(200);
    const res = await download(missing.body.url);
    expect(res.status).to.equal(404);
    expect(res.json.type).to.equal('NotFoundError');

    await api.put(`/api/buckets/${bucketId}/assets`, { name: 'empty.txt' });
    const empty = await api.post(`/api/buckets/${bucketId}/asset-urls/empty.txt`);
    expect((await download(empty.body.url)).status).to.equal(404);
  });

  it('refuses tampered, expired and wrong-method URLs with 403', async () => {
    const { t, api, bucketId } = await tenantWithBucket();
    const put = (await api.post(`/api/buckets/${bucketId}/asset-urls/a.txt`, { operation: 'PUT' })).body.url as string;
    expect((await request('PUT', put, undefined, { raw: 'hello' })).status).to.equal(200);
    const get = (await api.post(`/api/buckets/${bucketId}/asset-urls/a.txt`, { operation: 'GET' })).body.url as string;
    expect((await download(get)).status).to.equal(200);

    const expectForbidden = async (reply: { status: number; body: any }, message: RegExp) => {
      expect(reply.status).to.equal(403);
      expect(reply.body.type).to.equal('ForbiddenError');
      expect(reply.body.errors[0].message).to.match(message);
    };
    const u = new URL(get);
    const sig = u.searchParams.get('signature')!;
    u.searchParams.set('signature', (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1));
    await expectForbidden(await request('GET', u.toString()), /signature is invalid/);
    u.searchParams.set('signature', sig.slice(1));
    await expectForbidden(await request('GET', u.toString()), /signature is invalid/);
    await expectForbidden(await request('GET', get.replace('/a.txt?', '/b.txt?')), /signature is invalid/);
    const longer = new URL(get);
    longer.searchParams.set('expires', String(Number(longer.searchParams.get('expires')) + 3600));
    await expectForbidden(await request('GET', longer.toString()), /signature is invalid/);
    await expectForbidden(await request('GET', get.split('?')[0]), /not presigned/);

    await expectForbidden(await request('PUT', get, undefined, { raw: 'overwrite' }), /signed for GET, not PUT/);
    await expectForbidden(await request('GET', put), /signed for PUT, not GET/);
    expect((await download(get)).bytes.toString()).to.equal('hello');

    const { box, config } = getStack();
    const expired = presignAssetUrl(box, config.publicBaseUrl, {
      operations: ['GET'],
      bucketId,
      name: 'a.txt',
      actor: t.userId,
      expires: Math.floor(Date.now() / 1000) - 60,
    });
    await expectForbidden(await request('GET', expired), /expired/);
  });

  it('refuses names that look like path traversal with 400', async () => {
    const { api, bucketId } = await tenantWithBucket();
    const bad = [
      '../x',
      'a/../b',
      '..',
      '.',
      './a',
      'a/./b',
      '/abs',
      'a//b',
      'a/',
      'a\\b',
      '..\\x',
      'a\u0000b',
      'a\nb',
      'a\u007fb',
    ];
    for (const name of bad) {
      const res = await api.put(`/api/buckets/${bucketId}/assets`, { name });
      expect(res.status, JSON.stringify(name)).to.equal(400);
      expect(res.body.type).to.equal('ValidationError');
      expect(res.body.errors[0].path).to.equal('/body/name');
    }
    // In paths, encoded so that neither fetch nor the URL parser normalizes them away.
    for (const encoded of ['a/..%2Fb', 'a%5Cb', 'a%2F%2Fb', '%2Fetc/passwd', 'a%00b']) {
      const get = await api.get(`/api/buckets/${bucketId}/assets/${encoded}`);
      expect(get.status, encoded).to.equal(400);
      expect(get.body.errors[0].path).to.equal('/path/name');
      expect((await api.post(`/api/buckets/${bucketId}/asset-urls/${encoded}`, { operation: 'PUT' })).status).to.equal(
        400,
      );
    }
    expect((await api.get(`/api/buckets/${bucketId}/assets`)).body.assets).to.have.length(0);
  });

  it('refuses uploads beyond the size limit with 413, early or while streaming', async () => {
    const { api, bucketId } = await tenantWithBucket();
    const url = (await api.post(`/api/buckets/${bucketId}/asset-urls/big.bin`, { operation: 'PUT' })).body
      .url as string;
    // Declared too large: refused before any byte is read.
    const declared = await rawPut(url, { 'content-length': String(getStack().config.maxAssetBytes + 1) });
    expect(declared.status).to.equal(413);
    expect(declared.json.type).to.equal('PayloadTooLargeError');

    // No declared length (chunked): the limit applies while streaming.
    const small = await apiWithAssetLimit(1000);
    try {
      const there = url.replace(getStack().baseUrl, small.baseUrl);
      const streamed = await rawPut(there, { 'transfer-encoding': 'chunked' }, Buffer.alloc(5000, 1));
      expect(streamed.status).to.equal(413);
      expect(streamed.json.type).to.equal('PayloadTooLargeError');
      expect(streamed.json.errors[0].message).to.match(/1000 bytes/);
      expect((await api.get(`/api/buckets/${bucketId}/assets/big.bin`)).status).to.equal(404);
      expect(fs.existsSync(blobFile(bucketId, 'big.bin'))).to.equal(false);

      const exact = await rawPut(there, { 'transfer-encoding': 'chunked' }, Buffer.alloc(1000, 1));
      expect(exact.status).to.equal(200);
      expect(exact.json.size).to.equal(1000);
    } finally {
      await small.close();
    }
  });

  it('filters assets by prefix and postfix literally and echoes them', async () => {
    const { api, bucketId } = await tenantWithBucket();
    const names = ['a/1.txt', 'a/2.csv', 'b/1.txt', '50%/x.txt', '50a/x.txt', 'x_y.md', 'xzy.md'];
    for (const name of names) expect((await api.put(`/api/buckets/${bucketId}/assets`, { name })).status).to.equal(201);
    const list = async (query: string) => {
      const res = await api.get(`/api/buckets/${bucketId}/assets?${query}`);
      expect(res.status).to.equal(200);
      return res;
    };
    const namesOf = (res: { body: { assets: Array<{ name: string }> } }) => res.body.assets.map((a) => a.name).sort();

    const prefixed = await list('prefix=a/');
    expect(namesOf(prefixed)).to.deep.equal(['a/1.txt', 'a/2.csv']);
    expect(prefixed.body.prefix).to.equal('a/');
    expect(prefixed.body).to.not.have.property('postfix');
    expect(namesOf(await list(`prefix=${encodeURIComponent('50%')}`))).to.deep.equal(['50%/x.txt']);
    expect(namesOf(await list(`postfix=${encodeURIComponent('_y.md')}`))).to.deep.equal(['x_y.md']);
    const both = await list('prefix=a/&postfix=.txt');
    expect(namesOf(both)).to.deep.equal(['a/1.txt']);
    expect(both.body).to.include({ prefix: 'a/', postfix: '.txt' });
    expect(namesOf(await list('postfix=.txt'))).to.deep.equal(['50%/x.txt', '50a/x.txt', 'a/1.txt', 'b/1.txt']);

    const page = await list('postfix=.txt&page=2&page_size=3');
    expect(page.body.assets).to.have.length(1);
    expect(page.body.pagination).to.include({ total_count: 4, total_pages: 2, page_number: 2 });
  });

  it('deleting a bucket deletes its assets and their bytes', async () => {
    const { api, bucketId } = await tenantWithBucket();
    const put = (await api.post(`/api/buckets/${bucketId}/asset-urls/dir/keep.bin`, { operation: 'PUT' })).body
      .url as string;
    expect((await request('PUT', put, undefined, { raw: 'bytes' })).status).to.equal(200);
    const get = (await api.post(`/api/buckets/${bucketId}/asset-urls/dir/keep.bin`)).body.url as string;
    expect(fs.existsSync(blobFile(bucketId, 'dir/keep.bin'))).to.equal(true);

    expect((await api.delete(`/api/buckets/${bucketId}`)).status).to.equal(204);
    expect(fs.existsSync(blobFile(bucketId, 'dir/keep.bin'))).to.equal(false);
    const [{ count }] = await getStack().ds.query('SELECT count(*)::int AS count FROM assets WHERE bucket_id = $1', [
      bucketId,
    ]);
    expect(count).to.equal(0);
    const after = await download(get);
    expect(after.status).to.equal(404);
    expect(after.json.errors[0].message).to.match(/Bucket/);
    expect((await request('PUT', put, undefined, { raw: 'late' })).status).to.equal(404);
    expect(fs.existsSync(blobFile(bucketId, 'dir/keep.bin'))).to.equal(false);
  });

  it("answers 404 to another organization's key on every bucket and asset route", async () => {
    const { api, bucketId } = await tenantWithBucket();
    expect((await api.put(`/api/buckets/${bucketId}/assets`, { name: 'dir/secret.txt' })).status).to.equal(201);
    const other = as((await newTenant('intruder')).key);
    const base = `/api/buckets/${bucketId}`;
    const replies = [
      await other.get(base),
      await other.patch(base, { name: 'mine' }),
      await other.get(`${base}/assets`),
      await other.put(`${base}/assets`, { name: 'planted.txt' }),
      await other.get(`${base}/assets/dir/secret.txt`),
      await other.post(`${base}/asset-urls/dir/secret.txt`),
      await other.post(`${base}/asset-urls/dir/secret.txt`, { operation: 'PUT' }),
      await other.delete(`${base}/assets/dir/secret.txt`),
      await other.delete(base),
    ];
    for (const r of replies) {
      expect(r.status).to.equal(404);
      expect(r.body.type).to.equal('NotFoundError');
    }
    expect((await other.get('/api/buckets')).body.buckets.map((b: any) => b.name)).to.deep.equal(['default']);
    expect((await api.get(`${base}/assets/dir/secret.txt`)).status).to.equal(200);
    expect((await api.get(base)).body.name).to.equal('files');
    expect((await api.get(`${base}/assets`)).body.assets.map((a: { name: string }) => a.name)).to.deep.equal([
      'dir/secret.txt',
    ]);
  });
});
