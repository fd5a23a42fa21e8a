// Trimming a package cache to BUILD_CACHE_MB: least recently used files go first, the newest stay within
// the quota; links are removed as links, never followed.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { diskUsage } from '../../../../src/runtime/build/disk-quota';
import { trimCache } from '../../../../src/runtime/build/package-cache';

const MiB = 1024 * 1024;

describe('package cache trimming', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tarmac-cache-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** Ten 1 MiB files, file-0 the oldest (used an hour ago) to file-9 the newest, in nested directories. */
  function fill(): string[] {
    const now = Date.now() / 1000;
    return Array.from({ length: 10 }, (_, i) => {
      const file = path.join(dir, 'pip', 'http', String(i % 3), `file-${i}`);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, Buffer.alloc(MiB, 1));
      const at = now - 3600 + i * 60;
      fs.utimesSync(file, at, at);
      return file;
    });
  }

  it('removes the oldest files first and keeps the newest within the quota', async () => {
    const files = fill();
    const removed = await trimCache(dir, 4.5 * MiB);
    expect(removed).to.be.at.least(5 * MiB);
    const left = files.filter((f) => fs.existsSync(f)).map((f) => path.basename(f));
    expect(left).to.deep.equal(['file-6', 'file-7', 'file-8', 'file-9']);
    expect(await diskUsage(dir)).to.be.at.most(4.5 * MiB + 64 * 1024); // the directories themselves
  });

  it('counts a recent read as a use', async () => {
    const files = fill();
    const now = Date.now() / 1000;
    fs.utimesSync(files[0], now, now - 7200); // read just now, written long ago
    await trimCache(dir, 2.5 * MiB);
    expect(files.filter((f) => fs.existsSync(f)).map((f) => path.basename(f))).to.deep.equal(['file-0', 'file-9']);
  });

  it('leaves a cache within its quota alone, and never follows a link out of it', async () => {
    const files = fill();
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'tarmac-outside-'));
    try {
      fs.writeFileSync(path.join(outside, 'precious'), Buffer.alloc(MiB));
      fs.utimesSync(path.join(outside, 'precious'), 0, 0);
      fs.symlinkSync(outside, path.join(dir, 'pip', 'escape'));
      expect(await trimCache(dir, 20 * MiB)).to.equal(0);
      expect(files.every((f) => fs.existsSync(f))).to.equal(true);
      await trimCache(dir, 0);
      expect(files.some((f) => fs.existsSync(f))).to.equal(false);
      expect(fs.existsSync(path.join(outside, 'precious'))).to.equal(true);
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });
});
