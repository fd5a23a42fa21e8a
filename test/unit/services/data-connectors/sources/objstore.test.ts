// The objstore source against a real S3-compatible server (moto, test/harness/s3-server.ts): prefixes with
// pagination, single keys, ETags as versions, the size cap (never downloaded past), a key the credentials may
// not read (moto's IAM policy evaluation: a real 403), missing keys and buckets, refused credentials.
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { expect } from 'chai';
import {
  objstoreSource,
  parseS3Uri,
  type ObjstoreConfig,
} from '../../../../../src/services/data-connectors/sources/objstore';
import { SourceError, SourceUnavailableError } from '../../../../../src/services/data-connectors/sources/source-error';
import { createOutboundPolicy } from '../../../../../src/security/outbound-policy';
import { startS3Server, type S3Server, type S3Credentials } from '../../../../harness/s3-server';
import { OUTSIDE_HOST } from '../../../../harness/stack';
import { listAll, rejectionOf, sourceContext } from '../../../../support/sources';

describe('objstore source (moto S3 server)', function () {
  this.timeout(300_000); // the first run on a machine builds moto's venv
  let s3: S3Server;
  let reader: S3Credentials;

  const config = (uris: string[], credentials: S3Credentials = s3.admin): ObjstoreConfig => ({
    objstore_access_key_id: credentials.accessKeyId,
    objstore_secret_access_key: credentials.secretAccessKey,
    uris,
    objstore_endpoint: s3.endpoint,
    objstore_force_path_style: true,
  });
  const put = (Bucket: string, Key: string, Body: string | Buffer, ContentType = 'text/plain') =>
    s3.client().send(new PutObjectCommand({ Bucket, Key, Body, ContentType }));

  before(async () => {
    s3 = await startS3Server();
    await s3.createBucket('docs');
    await s3.createBucket('other');
    await put('docs', 'public/a.txt', 'alpha');
    await put('docs', 'public/sub/b.html', '<p>beta</p>', 'text/html');
    await put('docs', 'public/folder/', ''); // a "folder" placeholder: not an item
    await put('docs', 'public/empty.txt', '');
    await put('docs', 'secret/c.txt', 'gamma');
    await put('docs', 'big.bin', Buffer.alloc(4096, 1));
    for (let i = 0; i < 1005; i += 50) {
      const batch = Array.from({ length: Math.min(50, 1005 - i) }, (_, j) => i + j);
      await Promise.all(batch.map((n) => put('other', `many/${String(n).padStart(4, '0')}.txt`, `n${n}`)));
    }
    reader = await s3.createUser(
      'reader',
      { Effect: 'Allow', Action: ['s3:GetObject'], Resource: ['arn:aws:s3:::docs/public/*'] },
      { Effect: 'Allow', Action: ['s3:ListBucket'], Resource: ['arn:aws:s3:::docs'] },
    );
  });
  after(async () => s3?.stop());
  afterEach(async () => s3.enforceAuth(false));

  it('parses s3 URIs', () => {
    expect(parseS3Uri('s3://docs/a/b.txt')).to.deep.equal({ bucket: 'docs', key: 'a/b.txt', isPrefix: false });
    expect(parseS3Uri('s3://docs/a/')).to.deep.equal({ bucket: 'docs', key: 'a/', isPrefix: true });
    expect(parseS3Uri('s3://docs')).to.deep.equal({ bucket: 'docs', key: '', isPrefix: true });
    for (const bad of ['http://docs/a', 's3://', 's3://UPPER/a', 's3://a/b', 'docs/a'])
      expect(parseS3Uri(bad), bad).to.equal(undefined);
  });

  it('lists a prefix and a key, with ETags as versions, and reads them', async () => {
    const source = objstoreSource(config(['s3://docs/public/', 's3://docs/secret/c.txt', 's3://docs/public/a.txt']));
    const { items, errors } = await listAll(source);
    expect(errors).to.deep.equal([]);
    expect(items.map((i) => i.sourceUri)).to.deep.equal([
      's3://docs/public/a.txt',
      's3://docs/public/empty.txt',
      's3://docs/public/sub/b.html',
      's3://docs/secret/c.txt',
    ]);
    expect(items.map((i) => i.path)).to.deep.equal([
      'docs/public/a.txt',
      'docs/public/empty.txt',
      'docs/public/sub/b.html',
      'docs/secret/c.txt',
    ]);
    for (const item of items) expect(item.version).to.match(/^[0-9a-f]{32}$/);

    const b = await source.read(items[2], sourceContext());
    expect(b.body.toString()).to.equal('<p>beta</p>');
    expect(b.contentType).to.equal('text/html');
    expect(b.version).to.equal(items[2].version);
    const empty = await source.read(items[1], sourceContext());
    expect(empty.body.length).to.equal(0);
    const c = await source.read(items[3], sourceContext());
    expect(c.body.toString()).to.equal('gamma');

    // Changed content, changed version.
    await put('docs', 'public/a.txt', 'alpha 2');
    const again = await listAll(objstoreSource(config(['s3://docs/public/a.txt'])));
    expect(again.items[0].version).to.not.equal(items[0].version);
  });

  it('pages through a prefix of more than 1,000 objects', async () => {
    const ctx = sourceContext();
    const { items, errors } = await listAll(objstoreSource(config(['s3://other/many/'])), ctx);
    expect(errors).to.deep.equal([]);
    expect(items).to.have.length(1005);
    expect(new Set(items.map((i) => i.path)).size).to.equal(1005);
    expect(ctx.notes.length).to.be.greaterThanOrEqual(2);
  });

  it('reports objects over the cap as TooLarge, when listed and when read, without downloading them', async () => {
    const ctx = sourceContext({ maxItemBytes: 1000 });
    const listed = await listAll(objstoreSource(config(['s3://docs/big.bin', 's3://docs/'])), ctx);
    // Named by a key and again by a prefix: one error (an object is listed once).
    expect(listed.errors.map((e) => [e.type, e.path])).to.deep.equal([['TooLarge', 's3://docs/big.bin']]);
    expect(listed.items.map((i) => i.sourceUri)).to.not.include('s3://docs/big.bin');
    // Grown between listing and reading: the ranged read stops at the cap.
    const source = objstoreSource(config(['s3://docs/public/a.txt']));
    const { items } = await listAll(source, ctx);
    await put('docs', 'public/a.txt', Buffer.alloc(50_000, 2));
    const err = await rejectionOf(source.read(items[0], ctx));
    expect(err).to.be.instanceOf(SourceError);
    expect(err.type).to.equal('TooLarge');
    expect(err.message).to.contain('1000 bytes');
  });

  it('reports missing keys and buckets as NotFound and bad URIs as InvalidUri, and goes on', async () => {
    const { items, errors } = await listAll(
      objstoreSource(config(['s3://docs/nope.txt', 's3://no-such-bucket/', 'https://docs/x', 's3://docs/secret/'])),
    );
    expect(errors.map((e) => [e.type, e.path])).to.deep.equal([
      ['NotFound', 's3://docs/nope.txt'],
      ['NotFound', 's3://no-such-bucket/'],
      ['InvalidUri', 'https://docs/x'],
    ]);
    expect(items.map((i) => i.sourceUri)).to.deep.equal(['s3://docs/secret/c.txt']);
  });

  it('reports a key the credentials may not read as Forbidden (a real 403), and reads the allowed ones', async () => {
    await s3.enforceAuth(true);
    const source = objstoreSource(
      config(['s3://docs/secret/c.txt', 's3://docs/public/sub/b.html', 's3://other/many/'], reader),
    );
    const { items, errors } = await listAll(source);
    expect(errors.map((e) => [e.type, e.path])).to.deep.equal([
      ['Forbidden', 's3://docs/secret/c.txt'],
      ['Forbidden', 's3://other/many/'],
    ]);
    expect(errors[0].message).to.contain('access denied');
    expect(items.map((i) => i.sourceUri)).to.deep.equal(['s3://docs/public/sub/b.html']);
    expect((await source.read(items[0], sourceContext())).body.toString()).to.equal('<p>beta</p>');

    // Listed by a prefix the key may list, read where it may not: the read is Forbidden.
    const all = objstoreSource(config(['s3://docs/secret/'], reader));
    const listed = await listAll(all);
    expect(listed.items.map((i) => i.sourceUri)).to.deep.equal(['s3://docs/secret/c.txt']);
    const err = await rejectionOf(all.read(listed.items[0], sourceContext()));
    expect(err.type).to.equal('Forbidden');
  });

  it('fails the whole listing when the credentials are refused or the store does not answer', async () => {
    await s3.enforceAuth(true);
    const wrongKey = await rejectionOf(
      listAll(
        objstoreSource(
          config(['s3://docs/public/a.txt'], { accessKeyId: 'AKIANOSUCHKEY0000000', secretAccessKey: 'x' }),
        ),
      ),
    );
    expect(wrongKey).to.be.instanceOf(SourceUnavailableError);
    expect(wrongKey.type).to.equal('Unauthorized');
    expect(wrongKey.message).to.contain('refused the credentials');
    const wrongSecret = await rejectionOf(
      listAll(
        objstoreSource(config(['s3://docs/public/'], { accessKeyId: reader.accessKeyId, secretAccessKey: 'wrong' })),
      ),
    );
    expect(wrongSecret.type).to.equal('Unauthorized');

    const closed = objstoreSource({ ...config(['s3://docs/a']), objstore_endpoint: 'http://127.0.0.1:1' });
    const unreachable = await rejectionOf(listAll(closed));
    expect(unreachable.type).to.equal('Unreachable');
  });

  it('stops at cancellation and refuses an endpoint the installation refuses', async () => {
    const aborted = new AbortController();
    aborted.abort();
    const err = await rejectionOf(
      listAll(objstoreSource(config(['s3://other/many/'])), sourceContext({ signal: aborted.signal })),
    );
    expect(err.name).to.equal('AbortError');

    // The local store listens on 127.0.0.1: the outbound policy without allowances refuses it, by address
    // and by name (the endpoint's name resolves to it).
    const policy = createOutboundPolicy({ cidrs: [], hostPorts: [] });
    const byName = new URL(s3.endpoint);
    byName.hostname = 'localhost';
    for (const endpoint of [s3.endpoint, byName.href]) {
      const refusing = objstoreSource({ ...config(['s3://docs/']), objstore_endpoint: endpoint }, { policy });
      const refused = await rejectionOf(listAll(refusing));
      expect(refused.type, refused.message).to.equal('AddressRefused');
      expect(refused.message).to.include('OUTBOUND_ALLOW').and.not.include(new URL(s3.endpoint).port);
    }
    // Allowed by host:port, the same store is listed.
    const port = Number(new URL(s3.endpoint).port);
    const allowing = createOutboundPolicy({ cidrs: [], hostPorts: [{ host: OUTSIDE_HOST, port }] });
    const listed = await listAll(objstoreSource(config(['s3://docs/public/a.txt']), { policy: allowing }));
    expect(listed.items).to.have.length(1);
    expect(() => objstoreSource({ ...config([]), objstore_endpoint: 'file:///etc' })).to.throw('http(s) URL');
  });
});
