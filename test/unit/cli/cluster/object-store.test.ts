// The production shape's object store, moto's real server (tools/obtain-moto.sh) on its own loopback address:
// the environment it hands out is read back by the platform's own loadConfig (so the variable names are the
// ones src/config/blobs.ts reads), an object put with @aws-sdk/client-s3 from that configuration comes back,
// the platform's S3 blob store streams a multipart blob through it and presigns a URL that serves it, and a
// restarted store has the bucket again but none of the objects (moto keeps them in memory: docs/production.md).
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { expect } from 'chai';
import { S3BlobStore } from '../../../../src/blobs/s3-blob-store';
import { MOTO_VERSION, motoPython, startObjectStore, type ObjectStore } from '../../../../src/cli/cluster/object-store';
import { loadConfig } from '../../../../src/config';
import { freePort } from '../../../harness/ports';
import { readRepoFile, REPO_ROOT } from '../../../support/house';

const HOST = '127.0.0.43';
const BUCKET = 'tarmac-blobs';

describe('object store (moto server)', function () {
  this.timeout(300_000);
  let dir: string;
  let python: string;
  let port: number;
  let store: ObjectStore;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tarmac-store-'));
    python = execFileSync('bash', [path.join(REPO_ROOT, 'tools', 'obtain-moto.sh')], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    })
      .trim()
      .split('\n')
      .pop()!;
    port = await freePort();
    store = await startObjectStore({ dir, host: HOST, port, bucket: BUCKET, python });
  });
  after(async () => {
    await store?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('runs the moto the obtain script and the test harness pin, from the cache the configuration names', () => {
    expect(readRepoFile('tools/obtain-moto.sh')).to.match(
      new RegExp(`^VERSION=${MOTO_VERSION.replace(/\./g, '\\.')} `, 'm'),
    );
    expect(readRepoFile('test/harness/s3-server.ts')).to.include(`'moto[server]==${MOTO_VERSION}'`);
    const cache = process.env.TARMAC_CACHE_DIR;
    expect(python).to.equal(motoPython(loadConfig(cache ? { TARMAC_CACHE_DIR: cache } : {}).cacheDir));
  });

  it('hands out the BLOB_STORE=s3 settings the platform reads, and an object put with them comes back', async () => {
    const { blobS3 } = loadConfig(store.env);
    expect(blobS3).to.deep.equal({
      bucket: BUCKET,
      region: 'us-east-1',
      endpoint: `http://${HOST}:${port}`,
      forcePathStyle: true,
      credentials: {
        accessKeyId: store.env.BLOB_S3_ACCESS_KEY_ID,
        secretAccessKey: store.env.BLOB_S3_SECRET_ACCESS_KEY,
      },
    });
    const s3 = new S3Client({
      endpoint: blobS3!.endpoint,
      region: blobS3!.region,
      forcePathStyle: blobS3!.forcePathStyle,
      credentials: { ...blobS3!.credentials! },
    });
    try {
      await s3.send(new PutObjectCommand({ Bucket: blobS3!.bucket, Key: 'hello/world.txt', Body: 'hello, store' }));
      const got = await s3.send(new GetObjectCommand({ Bucket: blobS3!.bucket, Key: 'hello/world.txt' }));
      expect(await got.Body!.transformToString()).to.equal('hello, store');
      const listed = await s3.send(new ListObjectsV2Command({ Bucket: blobS3!.bucket }));
      expect(listed.Contents?.map((o) => o.Key)).to.deep.equal(['hello/world.txt']);
    } finally {
      s3.destroy();
    }
  });

  it("serves the platform's S3 blob store: a multipart blob streamed in and out, and a presigned GET", async () => {
    const blobs = new S3BlobStore(loadConfig(store.env).blobS3!);
    try {
      const body = crypto.randomBytes(20 * 1024 * 1024); // three parts of 8 MB; moto spools them to `dir`
      expect(await blobs.put('assets/big.bin', Readable.from([body]), body.length)).to.deep.equal({
        size: body.length,
      });
      const got = await blobs.get('assets/big.bin');
      expect(got?.size).to.equal(body.length);
      const chunks: Buffer[] = [];
      for await (const chunk of got!.stream) chunks.push(chunk as Buffer);
      expect(Buffer.concat(chunks).equals(body)).to.equal(true);

      await blobs.put('assets/small.txt', Readable.from([Buffer.from('presigned')]), 100);
      const url = await blobs.presignedUrl('assets/small.txt', 'GET', Math.floor(Date.now() / 1000) + 60);
      expect(url.startsWith(`${store.endpoint}/${BUCKET}/assets/small.txt?`)).to.equal(true);
      const r = await fetch(url);
      expect(r.status).to.equal(200);
      expect(await r.text()).to.equal('presigned');
    } finally {
      blobs.close();
    }
  });

  it('loses its objects when it restarts (moto keeps them in memory), but has its bucket again', async () => {
    await store.stop();
    expect(
      await fetch(store.endpoint).then(
        () => 'answered',
        () => 'refused',
      ),
    ).to.equal('refused');
    store = await startObjectStore({ dir, host: HOST, port, bucket: BUCKET, python });
    const blobs = new S3BlobStore(loadConfig(store.env).blobS3!);
    try {
      expect(await blobs.get('assets/small.txt')).to.equal(undefined);
      await blobs.put('after/restart.txt', Readable.from([Buffer.from('again')]), 100);
      expect((await blobs.get('after/restart.txt'))?.size).to.equal(5);
    } finally {
      blobs.close();
    }
  });
});
