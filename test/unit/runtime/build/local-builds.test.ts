// Local build caches of several "workers" (each its own BUILD_DIR) over one filesystem blob store: the builder
// publishes and keeps its copy, another worker fetches once for concurrent runs, a corrupted artifact is refused,
// a leftover directory is replaced, the least recently used idle builds are evicted past the quota (never one
// in use, here or elsewhere), and a restarted worker finds the copies it had.
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { FsBlobStore } from '../../../../src/blobs/fs-blob-store';
import { BuildArtifactRefused } from '../../../../src/runtime/build/artifact-unpack';
import { LocalBuilds, type BuildArtifact } from '../../../../src/runtime/build/local-builds';
import { createLogger } from '../../../../src/logger';

/** The real filesystem store, counting the reads of each key. */
class CountingBlobStore extends FsBlobStore {
  reads = new Map<string, number>();
  override get(key: string) {
    this.reads.set(key, (this.reads.get(key) ?? 0) + 1);
    return super.get(key);
  }
}

describe('local build cache', () => {
  let dir: string;
  let blobs: CountingBlobStore;
  const owned: Array<{ dir: string; sandboxIndex: number }> = [];

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tarmac-local-builds-'));
    blobs = new CountingBlobStore(path.join(dir, 'blobs'));
    owned.length = 0;
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const worker = (name: string, opts: { maxBytes?: number; inUseElsewhere?: Set<string> } = {}) =>
    new LocalBuilds({
      buildDir: path.join(dir, name),
      blobs,
      maxBytes: opts.maxBytes ?? 1024 ** 3,
      maxBuildBytes: 64 * 1024 ** 2,
      ownTree: async (tree, sandboxIndex) => {
        owned.push({ dir: tree, sandboxIndex });
        await fs.promises.chmod(tree, 0o750);
      },
      sandboxed: false,
      inUseElsewhere: async (ids) => new Set(ids.filter((id) => opts.inUseElsewhere?.has(id))),
      log: createLogger('silent', 'test-local-builds'),
    });

  /** A build of about `kb` KiB made by `builder` in place, then published. */
  async function built(builder: LocalBuilds, kb = 10): Promise<{ id: string; artifact: BuildArtifact }> {
    const id = randomUUID();
    const at = builder.pathOf(id);
    fs.mkdirSync(path.join(at, 'src'), { recursive: true });
    fs.writeFileSync(path.join(at, 'manifest.json'), JSON.stringify({ id }));
    // Random bytes: the artifact is about as large as the build.
    fs.writeFileSync(path.join(at, 'src', 'blob.bin'), randomBytes(kb * 1024));
    fs.symlinkSync('/usr/bin/python3', path.join(at, 'src', 'python3'));
    return { id, artifact: await builder.publish(id, at) };
  }

  it('publishes the build, keeps the builder on its own copy, and fetches once for concurrent runs elsewhere', async () => {
    const a = worker('a');
    const { id, artifact } = await built(a);
    expect(artifact.key).to.equal(`builds/${id}/${artifact.sha256}.tar.gz`);
    expect(fs.existsSync(path.join(dir, 'blobs', artifact.key))).to.equal(true);

    const own = await a.use(id, artifact, 3);
    own.release();
    expect(blobs.reads.get(artifact.key) ?? 0).to.equal(0);

    const b = worker('b');
    const runs = await Promise.all([1, 2, 3].map(() => b.use(id, artifact, 3)));
    expect(blobs.reads.get(artifact.key)).to.equal(1);
    expect(owned).to.have.length(1);
    expect(owned[0].sandboxIndex).to.equal(3);
    expect(runs.map((r) => r.path)).to.deep.equal([1, 2, 3].map(() => b.pathOf(id)));
    const copy = b.pathOf(id);
    expect(fs.readFileSync(path.join(copy, 'manifest.json'), 'utf8')).to.equal(JSON.stringify({ id }));
    expect(fs.readFileSync(path.join(copy, 'src', 'blob.bin'))).to.deep.equal(
      fs.readFileSync(path.join(a.pathOf(id), 'src', 'blob.bin')),
    );
    expect(fs.readlinkSync(path.join(copy, 'src', 'python3'))).to.equal('/usr/bin/python3');
    expect(fs.statSync(copy).mode & 0o777).to.equal(0o750);
    expect(fs.readdirSync(path.join(dir, 'b', '.artifacts'))).to.deep.equal([`${id}.${artifact.sha256}`]);
    runs.forEach((r) => r.release());

    // A restarted worker finds its copy and fetches nothing.
    const restarted = worker('b');
    (await restarted.use(id, artifact, 3)).release();
    expect(blobs.reads.get(artifact.key)).to.equal(1);
    expect(restarted.held()).to.deep.equal([id]);
  });

  it('refuses a corrupted artifact (BuildCorrupt) and leaves nothing of it; replaces a leftover directory', async () => {
    const a = worker('a');
    const { id, artifact } = await built(a);
    const blobFile = path.join(dir, 'blobs', artifact.key);
    const good = fs.readFileSync(blobFile);
    fs.writeFileSync(blobFile, Buffer.concat([good.subarray(0, 100), Buffer.from('tampered'), good.subarray(108)]));

    const c = worker('c');
    const refused = await c.use(id, artifact, 0).catch((err: unknown) => err);
    expect(refused).to.be.instanceOf(BuildArtifactRefused).with.property('reason', 'BuildCorrupt');
    expect(fs.existsSync(c.pathOf(id))).to.equal(false);
    expect(fs.readdirSync(path.join(dir, 'c', '.artifacts'))).to.deep.equal([]);

    // An incomplete directory (a build attempt that crashed here) has no marker: it is replaced.
    fs.writeFileSync(blobFile, good);
    fs.mkdirSync(path.join(c.pathOf(id), 'half'), { recursive: true });
    (await c.use(id, artifact, 0)).release();
    expect(fs.readdirSync(c.pathOf(id)).sort()).to.deep.equal(['manifest.json', 'src']);

    fs.rmSync(blobFile);
    const gone = await worker('d')
      .use(id, artifact, 0)
      .catch((err: unknown) => err);
    expect(gone).to.be.instanceOf(BuildArtifactRefused).with.property('reason', 'BuildUnavailable');
  });

  it('evicts the least recently used idle builds past its quota, never one in use', async () => {
    const a = worker('a');
    const [b1, b2, b3] = [await built(a, 40), await built(a, 40), await built(a, 40)];
    // Room for about two builds of 40 KiB.
    const d = worker('d', { maxBytes: 100 * 1024, inUseElsewhere: new Set() });
    (await d.use(b1.id, b1.artifact, 0)).release();
    const held2 = await d.use(b2.id, b2.artifact, 0);
    const held3 = await d.use(b3.id, b3.artifact, 0);
    await d.evict();
    expect(d.held().sort()).to.deep.equal([b2.id, b3.id].sort());
    expect(fs.existsSync(d.pathOf(b1.id))).to.equal(false);

    // Both in use: over the quota, kept. Released, b3 is the least recently used idle one when b1 comes back.
    held3.release();
    (await d.use(b1.id, b1.artifact, 0)).release();
    await d.evict();
    expect(d.held().sort()).to.deep.equal([b1.id, b2.id].sort());
    held2.release();
    expect(d.heldBytes()).to.be.at.most(100 * 1024);

    // A build an open run uses elsewhere (a shared BUILD_DIR) stays too.
    const e = worker('e', { maxBytes: 0, inUseElsewhere: new Set([b1.id]) });
    (await e.use(b1.id, b1.artifact, 0)).release();
    (await e.use(b2.id, b2.artifact, 0)).release();
    await e.evict();
    expect(e.held()).to.deep.equal([b1.id]);
  });
});
