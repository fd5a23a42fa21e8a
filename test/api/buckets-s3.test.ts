// Buckets and assets through an api process whose blobs live in an S3-compatible store (BLOB_STORE=s3, against
// moto): uploads through the api's presigned PUT URL (streamed, MAX_ASSET_BYTES enforced), downloads through a
// presigned URL of the store itself, the api's own URL for GET,PUT, deletes of assets and whole buckets.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { expect } from 'chai';
import { createApp } from '../../src/api/app';
import { createBlobStore } from '../../src/blobs/create-blob-store';
import { assetBlobKey } from '../../src/blobs/keys';
import type { S3BlobStore } from '../../src/blobs/s3-blob-store';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/logger';
import { as } from '../harness/client';
import { startS3Server, type S3Server } from '../harness/s3-server';
import { getStack, newTenant } from '../harness/stack';

describe('buckets and assets with blobs in S3 (moto)', function () {
  this.timeout(300_000); // the first run on a machine builds moto's venv
  let s3: S3Server;
  let server: http.Server;
  let blobs: S3BlobStore;
  let baseUrl: string;

  before(async () => {
    s3 = await startS3Server();
    await s3.createBucket('tarmac-blobs');
    const s = getStack();
    // The settings as an operator writes them, read the one way settings are read.
    const { blobS3, publicConfig } = loadConfig({
      BLOB_STORE: 's3',
      BLOB_S3_BUCKET: 'tarmac-blobs',
      BLOB_S3_ENDPOINT: s3.endpoint,
      BLOB_S3_FORCE_PATH_STYLE: 'true',
      BLOB_S3_ACCESS_KEY_ID: s3.admin.accessKeyId,
      BLOB_S3_SECRET_ACCESS_KEY: s3.admin.secretAccessKey,
    });
    blobs = createBlobStore({ blobDir: s.config.blobDir, blobS3 }) as S3BlobStore;
    // Listening first: presigned api URLs carry this process's own base URL.
    server = http.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const app = createApp({
      config: { ...s.config, publicBaseUrl: baseUrl, blobS3, publicConfig, maxAssetBytes: 1000 },
      ds: s.ds,
      temporal: s.env.client,
      blobs,
      box: s.box,
      log: createLogger('silent', 'test-s3-api'),
    });
    server.on('request', app.callback());
  });
  after(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    blobs?.close();
    await s3?.stop();
  });

  const objectKeys = async (prefix: string) =>
    ((await s3.client().send(new ListObjectsV2Command({ Bucket: 'tarmac-blobs', Prefix: prefix }))).Contents ?? []).map(
      (o) => o.Key,
    );

  it('uploads through the api into the store, downloads from the store, deletes there', async () => {
    const t = await newTenant('buckets-s3');
    const api = as(t.key, baseUrl);
    const bucketId = (await api.post('/api/buckets', { name: 'files' })).body.bucket_id as string;
    expect((await api.get('/api/config')).body).to.include({
      data_lake_objstore_bucket: 'tarmac-blobs',
      data_lake_objstore_region: 'us-east-1',
      data_lake_objstore_url: s3.endpoint,
    });

    const put = await api.post(`/api/buckets/${bucketId}/asset-urls/docs/a.txt`, { operation: 'PUT' });
    expect(put.body.url.startsWith(`${baseUrl}/api/asset-data/${bucketId}/docs/a.txt?`)).to.equal(true);
    const uploaded = await fetch(put.body.url, { method: 'PUT', body: 'hello from s3' });
    expect(uploaded.status).to.equal(200);
    expect(await uploaded.json()).to.include({ name: 'docs/a.txt', size: 13 });
    expect(await objectKeys(`buckets/${bucketId}/`)).to.deep.equal([assetBlobKey(bucketId, 'docs/a.txt')]);

    // Past MAX_ASSET_BYTES (1000 here), streamed without a length: 413, and the object is unchanged.
    const tooBig = await fetch(put.body.url, {
      method: 'PUT',
      body: new ReadableStream({
        start(c) {
          for (let i = 0; i < 5; i++) c.enqueue(new Uint8Array(400));
          c.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect(tooBig.status).to.equal(413);

    const get = await api.post(`/api/buckets/${bucketId}/asset-urls/docs/a.txt`, { operation: 'GET' });
    expect(get.body.url.startsWith(`${s3.endpoint}/tarmac-blobs/${assetBlobKey(bucketId, 'docs/a.txt')}?`)).to.equal(
      true,
    );
    const direct = await fetch(get.body.url);
    expect([direct.status, await direct.text()]).to.deep.equal([200, 'hello from s3']);
    // Without an operation (griptape's file manager driver): the api's URL, for both.
    const both = await api.post(`/api/buckets/${bucketId}/asset-urls/docs/a.txt`, {});
    const viaApi = await fetch(both.body.url);
    expect([viaApi.status, await viaApi.text()]).to.deep.equal([200, 'hello from s3']);

    for (const name of ['b.txt', 'c.txt']) {
      const url = (await api.post(`/api/buckets/${bucketId}/asset-urls/${name}`, { operation: 'PUT' })).body.url;
      expect((await fetch(url, { method: 'PUT', body: name })).status).to.equal(200);
    }
    expect((await api.delete(`/api/buckets/${bucketId}/assets/b.txt`)).status).to.equal(204);
    expect(await objectKeys(`buckets/${bucketId}/`)).to.have.members([
      assetBlobKey(bucketId, 'docs/a.txt'),
      assetBlobKey(bucketId, 'c.txt'),
    ]);
    expect((await api.delete(`/api/buckets/${bucketId}`)).status).to.equal(204);
    expect(await objectKeys(`buckets/${bucketId}/`)).to.deep.equal([]);
  });
});
