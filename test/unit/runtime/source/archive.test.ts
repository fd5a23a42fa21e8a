// Archive bombs against unpackArchive: refused at the limit, in one streaming pass, with this process's
// memory flat (peak RSS measured through VmHWM) and no more than the limit written to disk. The bombs are
// built on the fly, a few MB each, inflating to 5 GiB.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { expect } from 'chai';
import { DeploymentFailure } from '../../../../src/runtime/build/failure';
import { unpackArchive, type ArchiveKind } from '../../../../src/runtime/source/archive';
import { peakRss, resetPeakRss, writeTarGzBomb, writeZipBomb } from '../../../harness/archive-bombs';

const MiB = 1024 ** 2;
const GiB = 1024 ** 3;
const RSS_GROWTH_LIMIT = 100 * 1e6;

describe('archive bombs', function () {
  this.timeout(180_000);
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tarmac-bomb-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** Unpacks and answers the refusal, the peak RSS growth and the bytes left on disk. */
  async function unpack(kind: ArchiveKind, file: string, maxBytes?: number) {
    const dest = path.join(dir, 'out');
    const resettable = resetPeakRss();
    const before = resettable ? process.memoryUsage().rss : peakRss();
    let refusal: DeploymentFailure | undefined;
    try {
      await unpackArchive(kind, file, dest, maxBytes);
    } catch (err) {
      if (!(err instanceof DeploymentFailure)) throw err;
      refusal = err;
    }
    const growth = peakRss() - before;
    const onDisk = Number(execFileSync('du', ['-sb', dest], { encoding: 'utf8' }).split('\t')[0]);
    return { refusal, growth, onDisk };
  }

  it('refuses a tar.gz of one 5 GiB file at its header, memory flat', async () => {
    const bomb = path.join(dir, 'bomb.tar.gz');
    expect(writeTarGzBomb(bomb, 1, 5 * GiB)).to.be.greaterThan(5 * GiB);
    expect(fs.statSync(bomb).size).to.be.lessThan(8 * MiB);
    const { refusal, growth, onDisk } = await unpack('tar', bomb);
    expect(refusal?.reason).to.equal('InvalidArchive');
    expect(refusal?.message).to.match(/unpacks to more than 4294967296 bytes/);
    expect(growth).to.be.lessThan(RSS_GROWTH_LIMIT);
    expect(onDisk).to.be.lessThan(MiB);
  });

  it('stops a tar.gz of 80 files of 64 MiB (5 GiB) at the limit, counting as it writes', async () => {
    const bomb = path.join(dir, 'bomb.tar.gz');
    writeTarGzBomb(bomb, 80, 64 * MiB);
    const { refusal, growth, onDisk } = await unpack('tar', bomb, 128 * MiB);
    expect(refusal?.message).to.match(/unpacks to more than 134217728 bytes/);
    expect(growth).to.be.lessThan(RSS_GROWTH_LIMIT);
    expect(onDisk).to.be.at.most(128 * MiB + MiB);
  });

  it('stops a zip of 80 entries of 64 MiB (5 GiB) at the limit, memory flat', async () => {
    const bomb = path.join(dir, 'bomb.zip');
    writeZipBomb(bomb, 80, 64 * MiB);
    const { refusal, growth, onDisk } = await unpack('zip', bomb, 128 * MiB);
    expect(refusal?.message).to.match(/unpacks to more than 134217728 bytes/);
    expect(growth).to.be.lessThan(RSS_GROWTH_LIMIT);
    expect(onDisk).to.be.at.most(128 * MiB + MiB);
  });

  it('counts what a zip entry inflates to, not what it declares', async () => {
    const bomb = path.join(dir, 'liar.zip');
    writeZipBomb(bomb, 1, 1024 * MiB, 1000);
    const { refusal, growth, onDisk } = await unpack('zip', bomb);
    expect(refusal?.reason).to.equal('InvalidArchive');
    expect(growth).to.be.lessThan(RSS_GROWTH_LIMIT);
    expect(onDisk).to.be.lessThan(MiB);
  });

  it('does not read past the end of a tar: trailing zeros are never inflated', async () => {
    const bomb = path.join(dir, 'trailing.tar.gz');
    writeTarGzBomb(bomb, 1, 1024);
    // 5 GiB of zeros after the end-of-archive blocks.
    const zeros = zlib.gzipSync(Buffer.alloc(64 * MiB), { level: 9 });
    for (let i = 0; i < 80; i++) fs.appendFileSync(bomb, zeros);
    const started = Date.now();
    const { refusal } = await unpack('tar', bomb);
    expect(refusal).to.equal(undefined);
    expect(Date.now() - started).to.be.lessThan(5_000);
    expect(fs.statSync(path.join(dir, 'out', 'zeros-0.bin')).size).to.equal(1024);
  });

  it('unpacks files, directories, modes and links the way they were packed', async () => {
    const src = path.join(dir, 'src');
    fs.mkdirSync(path.join(src, 'pkg', 'sub'), { recursive: true });
    fs.writeFileSync(path.join(src, 'pkg', 'main.py'), 'print("hi")\n');
    fs.writeFileSync(path.join(src, 'run.sh'), '#!/bin/sh\n', { mode: 0o755 });
    fs.symlinkSync('pkg/main.py', path.join(src, 'link.py'));
    fs.linkSync(path.join(src, 'pkg', 'main.py'), path.join(src, 'pkg', 'sub', 'hard.py'));
    const archive = path.join(dir, 'project.tar.gz');
    execFileSync('tar', ['-czf', archive, '-C', src, '.']);
    const { refusal } = await unpack('tar', archive);
    expect(refusal).to.equal(undefined);
    const out = path.join(dir, 'out');
    expect(fs.readFileSync(path.join(out, 'link.py'), 'utf8')).to.equal('print("hi")\n');
    expect(fs.lstatSync(path.join(out, 'link.py')).isSymbolicLink()).to.equal(true);
    expect(fs.readFileSync(path.join(out, 'pkg', 'sub', 'hard.py'), 'utf8')).to.equal('print("hi")\n');
    expect(fs.statSync(path.join(out, 'run.sh')).mode & 0o111).to.not.equal(0);
    expect(fs.statSync(path.join(out, 'pkg', 'main.py')).mode & 0o111).to.equal(0);
  });
});
