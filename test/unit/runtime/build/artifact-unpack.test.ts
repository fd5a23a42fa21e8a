// The unpacking of a build artifact against crafted hostile tars (headers encoded by the tar package's own
// Header): absolute names, `..`, symlinks escaping by a relative target, files written through a link, hard
// links out of the build, device and FIFO entries, a duplicate entry, too many inflated bytes; and the digest
// check that comes before any parsing.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { expect } from 'chai';
import * as tar from 'tar';
import { BuildArtifactRefused, fetchVerified, unpackBuild } from '../../../../src/runtime/build/artifact-unpack';

interface Crafted {
  path: string;
  type: 'File' | 'Directory' | 'SymbolicLink' | 'Link' | 'FIFO' | 'CharacterDevice';
  linkpath?: string;
  body?: string;
  mode?: number;
}

/** A gzipped tar of exactly these entries, in this order. */
function craftTar(entries: Crafted[]): Buffer {
  const blocks: Buffer[] = [];
  for (const e of entries) {
    const body = Buffer.from(e.body ?? '');
    const header = Buffer.alloc(512);
    new tar.Header({
      path: e.path,
      type: e.type,
      size: body.length,
      mode: e.mode ?? (e.type === 'Directory' ? 0o755 : 0o644),
      linkpath: e.linkpath,
      mtime: new Date(0),
    }).encode(header, 0);
    blocks.push(header);
    if (body.length) blocks.push(body, Buffer.alloc((512 - (body.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return zlib.gzipSync(Buffer.concat(blocks));
}

describe('build artifact unpacking', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tarmac-artifact-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  async function unpack(entries: Crafted[], maxBytes = 1024 * 1024) {
    const file = path.join(dir, 'a.tar.gz');
    fs.writeFileSync(file, craftTar(entries));
    const dest = path.join(fs.mkdtempSync(path.join(dir, 'u-')), 'build');
    const refusal = await unpackBuild(file, dest, maxBytes).then(
      () => undefined,
      (err: unknown) => err,
    );
    return { refusal, dest };
  }

  const refusedFor = async (entries: Crafted[], why: RegExp) => {
    const { refusal } = await unpack(entries);
    expect(refusal).to.be.instanceOf(BuildArtifactRefused);
    expect((refusal as BuildArtifactRefused).reason).to.equal('UnsafeBuild');
    expect((refusal as Error).message).to.match(why);
  };

  it('unpacks files, directories, links inside and absolute links, with modes of its own', async () => {
    const { refusal, dest } = await unpack([
      { path: 'src/', type: 'Directory', mode: 0o777 },
      { path: 'src/main.py', type: 'File', body: 'print(1)\n', mode: 0o4777 },
      { path: 'src/data.txt', type: 'File', body: 'data', mode: 0o666 },
      { path: 'src/alias.py', type: 'SymbolicLink', linkpath: 'main.py' },
      { path: 'src/up.txt', type: 'SymbolicLink', linkpath: '../src/data.txt' },
      { path: 'src/python3', type: 'SymbolicLink', linkpath: '/usr/bin/python3' },
      { path: 'src/same.txt', type: 'Link', linkpath: 'src/data.txt' },
    ]);
    expect(refusal).to.equal(undefined);
    expect(fs.readFileSync(path.join(dest, 'src/alias.py'), 'utf8')).to.equal('print(1)\n');
    expect(fs.statSync(path.join(dest, 'src/main.py')).mode & 0o7777).to.equal(0o755);
    expect(fs.statSync(path.join(dest, 'src/data.txt')).mode & 0o7777).to.equal(0o644);
    expect(fs.statSync(path.join(dest, 'src')).mode & 0o7777).to.equal(0o755);
    expect(fs.readlinkSync(path.join(dest, 'src/python3'))).to.equal('/usr/bin/python3');
    expect(fs.statSync(path.join(dest, 'src/same.txt')).ino).to.equal(fs.statSync(path.join(dest, 'src/data.txt')).ino);
  });

  it('refuses absolute names and `..`', async () => {
    await refusedFor([{ path: '/etc/cron.d/x', type: 'File', body: 'x' }], /absolute path/);
    await refusedFor([{ path: 'src/../../escape', type: 'File', body: 'x' }], /contains `\.\.`/);
    await refusedFor([{ path: 'src/./x', type: 'File', body: 'x' }], /not a plain path/);
    expect(fs.existsSync(path.join(dir, 'escape'))).to.equal(false);
  });

  it('refuses a symlink whose relative target escapes, and a hard link out of the build', async () => {
    await refusedFor([{ path: 'out', type: 'SymbolicLink', linkpath: '../../../etc' }], /link pointing outside/);
    await refusedFor([{ path: 'a/b', type: 'SymbolicLink', linkpath: '../../x' }], /link pointing outside/);
    await refusedFor([{ path: 'h', type: 'Link', linkpath: '../outside' }], /contains `\.\.`/);
    await refusedFor([{ path: 'h', type: 'Link', linkpath: 'etc/passwd' }], /hard link to no file/);
  });

  it('never writes through a link: an entry below a symlink makes the link fail', async () => {
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'tarmac-outside-'));
    try {
      await refusedFor(
        [
          { path: 'escape', type: 'SymbolicLink', linkpath: outside },
          { path: 'escape/planted', type: 'File', body: 'gotcha' },
        ],
        /"escape" could not be linked/,
      );
      expect(fs.readdirSync(outside)).to.deep.equal([]);
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });

  it('refuses devices, FIFOs and a second entry of the same name', async () => {
    await refusedFor([{ path: 'fifo', type: 'FIFO' }], /is a FIFO/);
    await refusedFor([{ path: 'tty', type: 'CharacterDevice' }], /is a CharacterDevice/);
    await refusedFor(
      [
        { path: 'x', type: 'File', body: 'first' },
        { path: 'x', type: 'File', body: 'second' },
      ],
      /could not be written/,
    );
  });

  it('stops past its byte limit', async () => {
    const { refusal } = await unpack([{ path: 'big', type: 'File', body: 'z'.repeat(200_000) }], 100_000);
    expect((refusal as Error).message).to.match(/more than 100000 bytes/);
  });

  it('refuses bytes whose digest is not the recorded one, before parsing them', async () => {
    const bytes = craftTar([{ path: 'x', type: 'File', body: 'x' }]);
    const file = path.join(dir, 'fetched.tar.gz');
    const wrong = await fetchVerified(Readable.from([bytes]), file, { sha256: '0'.repeat(64) }).catch(
      (e: unknown) => e,
    );
    expect(wrong).to.be.instanceOf(BuildArtifactRefused).with.property('reason', 'BuildCorrupt');
    expect(fs.existsSync(file)).to.equal(false);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    await fetchVerified(Readable.from([bytes]), file, { sha256, size: bytes.length });
    expect(fs.readFileSync(file).equals(bytes)).to.equal(true);
  });
});
