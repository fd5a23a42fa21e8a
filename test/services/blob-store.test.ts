// The blob-store contract, run against both backends: the filesystem store and the S3 store against a real
// S3-compatible server (moto, test/support/s3-server.ts). Presigned URLs of the store itself: S3 only.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { expect } from 'chai';
import { BlobStore, BlobTooLargeError } from '../../src/blobs/blob-store';
import { FsBlobStore } from '../../src/blobs/fs-blob-store';
import { S3BlobStore } from '../../src/blobs/s3-blob-store';
import { assetBlobKey } from '../../src/blobs/keys';
import { SecretBox } from '../../src/security/secret-box';
import { assetUrl, type AssetGrant, type AssetOperation } from '../../src/services/storage/buckets';
import { startS3Server, type S3Server } from '../support/s3-server';
import { rejectionOf } from '../support/sources';

const readAll = async (stream: Readable) => {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
};
const text = async (store: BlobStore, key: string) => {
  const blob = await store.get(key);
  return blob && { size: blob.size, body: (await readAll(blob.stream)).toString() };
};
/** `total` bytes of a deterministic pattern, produced in 64 KiB chunks (never all in memory). */
function pattern(total: number): Readable {
  let sent = 0;
  return new Readable({
    read() {
      if (sent >= total) return this.push(null);
      const n = Math.min(65536, total - sent);
      const chunk = Buffer.alloc(n);
      for (let i = 0; i < n; i++) chunk[i] = (sent + i) % 251;
      sent += n;
      this.push(chunk);
    },
  });
}
const digest = async (stream: Readable) => {
  const h = createHash('sha256');
  for await (const c of stream) h.update(c as Buffer);
  return h.digest('hex');
};

interface Backend {
  name: string;
  open(): Promise<BlobStore>;
  close(): Promise<void>;
}

let s3: S3Server | undefined;
let tmp: string | undefined;
const backends: Backend[] = [
  {
    name: 'filesystem',
    open: async () => {
      tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tarmac-blobs-'));
      return new FsBlobStore(tmp);
    },
    close: async () => {
      if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
    },
  },
  {
    name: 's3 (moto)',
    open: async () => {
      s3 = await startS3Server();
      await s3.createBucket('blobs');
      return new S3BlobStore({
        bucket: 'blobs',
        region: s3.region,
        endpoint: s3.endpoint,
        forcePathStyle: true,
        credentials: s3.admin,
      });
    },
    close: async () => s3?.stop(),
  },
];

for (const backend of backends) {
  describe(`blob store contract: ${backend.name}`, function () {
    this.timeout(300_000); // the first run on a machine builds moto's venv
    let store: BlobStore;
    before(async () => (store = await backend.open()));
    after(async () => {
      (store as { close?: () => void }).close?.();
      await backend.close();
    });

    it('stores, replaces and reads back bytes with their size; a missing key is undefined', async () => {
      expect(
        await store.put('buckets/b1/k1', Readable.from([Buffer.from('hello '), Buffer.from('world')]), 100),
      ).to.deep.equal({ size: 11 });
      expect(await text(store, 'buckets/b1/k1')).to.deep.equal({ size: 11, body: 'hello world' });
      await store.put('buckets/b1/k1', Readable.from([Buffer.from('bye')]), 100);
      expect(await text(store, 'buckets/b1/k1')).to.deep.equal({ size: 3, body: 'bye' });
      expect(await store.put('buckets/b1/empty', Readable.from([]), 100)).to.deep.equal({ size: 0 });
      expect(await text(store, 'buckets/b1/empty')).to.deep.equal({ size: 0, body: '' });
      expect(await store.get('buckets/b1/none')).to.equal(undefined);
    });

    it('streams a large blob through (multipart on S3) unchanged', async () => {
      const size = 20 * 1024 * 1024 + 123;
      expect(await store.put('archives/big', pattern(size), size)).to.deep.equal({ size });
      const blob = (await store.get('archives/big'))!;
      expect(blob.size).to.equal(size);
      expect(await digest(blob.stream)).to.equal(await digest(pattern(size)));
    });

    it('refuses a blob past the limit and keeps what was there', async () => {
      await store.put('buckets/b2/k', Readable.from([Buffer.from('old')]), 100);
      const err = await rejectionOf(store.put('buckets/b2/k', pattern(10 * 1024 * 1024), 1024 * 1024));
      expect(err).to.be.instanceOf(BlobTooLargeError);
      expect(await text(store, 'buckets/b2/k')).to.deep.equal({ size: 3, body: 'old' });
      expect(await rejectionOf(store.put('buckets/b2/new', pattern(101), 100))).to.be.instanceOf(BlobTooLargeError);
      expect(await store.get('buckets/b2/new')).to.equal(undefined);
    });

    it('leaves nothing when the body fails mid-way', async () => {
      const failing = new Readable({
        read() {
          this.push(Buffer.alloc(1000));
          this.destroy(new Error('client went away'));
        },
      });
      const err = await rejectionOf(store.put('buckets/b3/k', failing, 1e9));
      expect(err.message).to.contain('client went away');
      expect(await store.get('buckets/b3/k')).to.equal(undefined);
    });

    it('deletes one key (a missing one too) and whole prefixes, in batches, and nothing beside them', async () => {
      await store.put('buckets/b4/a', Readable.from([Buffer.from('a')]), 10);
      await store.delete('buckets/b4/a');
      await store.delete('buckets/b4/never');
      expect(await store.get('buckets/b4/a')).to.equal(undefined);

      const keys = Array.from({ length: 1205 }, (_, i) => `buckets/b5/${i}`);
      for (let i = 0; i < keys.length; i += 50) {
        await Promise.all(keys.slice(i, i + 50).map((k) => store.put(k, Readable.from([Buffer.from(k)]), 100)));
      }
      await store.put('buckets/b5x/k', Readable.from([Buffer.from('sibling')]), 100);
      await store.put('buckets/b5/deep/er', Readable.from([Buffer.from('deep')]), 100);
      await store.deletePrefix('buckets/b5');
      for (const k of ['buckets/b5/0', 'buckets/b5/1204', 'buckets/b5/deep/er'])
        expect(await store.get(k), k).to.equal(undefined);
      expect(await text(store, 'buckets/b5x/k')).to.deep.equal({ size: 7, body: 'sibling' });
      await store.deletePrefix('buckets/never');
    });

    it('refuses keys the platform does not make', async () => {
      for (const key of ['../etc/passwd', 'a/../../b', '/abs', 'a//b', 'a/b c']) {
        expect((await rejectionOf(store.get(key))).message, key).to.contain('unsafe blob key');
        expect((await rejectionOf(store.put(key, Readable.from([]), 10))).message, key).to.contain('unsafe blob key');
      }
    });

    it('answers CreateAssetUrl with a URL of the store for downloads (S3), else of the api', async () => {
      const box = new SecretBox(Buffer.alloc(32, 7));
      const grant = (operations: AssetOperation[]): AssetGrant => ({
        operations,
        bucketId: 'b7',
        name: 'dir/report 1.txt',
        expires: Math.floor(Date.now() / 1000) + 300,
        actor: 'user-1',
      });
      const api = 'http://api.example/api/asset-data/b7/dir/report%201.txt?';
      for (const ops of [['PUT'], ['GET', 'PUT']] as AssetOperation[][]) {
        expect(await assetUrl(store, box, 'http://api.example', grant(ops))).to.satisfy((u: string) =>
          u.startsWith(api),
        );
      }
      const download = await assetUrl(store, box, 'http://api.example', grant(['GET']));
      if (backend.name === 'filesystem') {
        expect(download.startsWith(api)).to.equal(true);
      } else {
        await store.put(assetBlobKey('b7', 'dir/report 1.txt'), Readable.from([Buffer.from('report')]), 100);
        expect(download.startsWith(`${s3!.endpoint}/blobs/${assetBlobKey('b7', 'dir/report 1.txt')}?`)).to.equal(true);
        expect(new URL(download).searchParams.get('X-Amz-Expires')).to.match(/^(299|300)$/);
        const res = await fetch(download);
        expect([res.status, await res.text()]).to.deep.equal([200, 'report']);
      }
    });

    if (backend.name === 'filesystem') {
      it('serves no URLs of its own (the api presigns its own)', () => {
        expect(store.presignedUrl).to.equal(undefined);
      });
    } else {
      it('presigns GET and PUT URLs of the store itself, each for its operation and its key', async () => {
        const expires = Math.floor(Date.now() / 1000) + 600;
        const put = await store.presignedUrl!('buckets/b6/k', 'PUT', expires);
        expect(put.startsWith(`${s3!.endpoint}/blobs/buckets/b6/k?`)).to.equal(true);
        expect(new URL(put).searchParams.get('X-Amz-Expires')).to.match(/^(599|600)$/);
        expect((await fetch(put, { method: 'PUT', body: 'direct upload' })).status).to.equal(200);
        const get = await store.presignedUrl!('buckets/b6/k', 'GET', expires);
        const res = await fetch(get);
        expect([res.status, await res.text()]).to.deep.equal([200, 'direct upload']);
        expect((await text(store, 'buckets/b6/k'))?.body).to.equal('direct upload');

        // What the store signs: this key, this operation, the grant's remaining lifetime. (moto cannot check
        // query-string signatures: with its IAM emulation on it answers them 500, so the refusal of a URL used
        // for another method, key or after its expiry is the store's own SigV4 check, not tested here.)
        for (const [url, id] of [
          [put, 'PutObject'],
          [get, 'GetObject'],
        ]) {
          const q = new URL(url).searchParams;
          expect(q.get('x-id')).to.equal(id);
          expect(q.get('X-Amz-SignedHeaders')).to.equal('host');
          expect(q.get('X-Amz-Credential')).to.match(
            new RegExp(`^${s3!.admin.accessKeyId}/\\d{8}/us-east-1/s3/aws4_request$`),
          );
        }
      });
    }
  });
}
