// The worker's reader of files user code could have written (src/runtime/untrusted-file.ts): planted links,
// FIFOs (directly and behind a link), devices and oversized files are refused without reading and without
// blocking, even many at once (the worker's libuv pool has 4 threads).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { readUntrustedFile, UntrustedFileError } from '../../../src/runtime/untrusted-file';

const within = <T>(ms: number, p: Promise<T>) =>
  Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`blocked for ${ms} ms`)), ms))]);

async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await within(2_000, p);
  } catch (err) {
    if (err instanceof UntrustedFileError) return err.problem;
    throw err;
  }
  throw new Error('read, not refused');
}

describe('untrusted files', () => {
  let root: string;
  let secret: string;
  before(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'untrusted-'));
    secret = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'secret-')), 'root-only');
    fs.writeFileSync(secret, 'version = 9.9.9-secret\n', { mode: 0o600 });
    fs.mkdirSync(path.join(root, 'venv'));
    fs.writeFileSync(path.join(root, 'venv', 'pyvenv.cfg'), 'version = 3.11.2\n');
    execFileSync('mkfifo', [path.join(root, 'fifo')]);
    fs.symlinkSync(secret, path.join(root, 'secret-link'));
    fs.symlinkSync('fifo', path.join(root, 'fifo-link'));
    fs.symlinkSync('/dev/zero', path.join(root, 'device-link'));
    fs.symlinkSync(path.dirname(secret), path.join(root, 'dir-link'));
    fs.symlinkSync('venv', path.join(root, 'venv-link'));
    fs.writeFileSync(path.join(root, 'big'), Buffer.alloc(4096, 97));
  });
  after(() => {
    fs.rmSync(root, { recursive: true, force: true });
    fs.rmSync(path.dirname(secret), { recursive: true, force: true });
  });

  it('reads a regular file below the trusted directory', async () => {
    const text = await readUntrustedFile(root, 'venv/pyvenv.cfg', { maxBytes: 1024 });
    expect(text.toString()).to.equal('version = 3.11.2\n');
  });

  it('refuses links (to a root-only file, a FIFO, a device, through a directory), FIFOs and oversized files', async () => {
    expect(await refusal(readUntrustedFile(root, 'secret-link', { maxBytes: 1024 }))).to.equal('link');
    expect(await refusal(readUntrustedFile(root, 'fifo', { maxBytes: 1024 }))).to.equal('not-a-file');
    expect(await refusal(readUntrustedFile(root, 'fifo-link', { maxBytes: 1024 }))).to.equal('link');
    expect(await refusal(readUntrustedFile(root, 'device-link', { maxBytes: 1024 }))).to.equal('link');
    expect(await refusal(readUntrustedFile(root, 'dir-link/root-only', { maxBytes: 1024 }))).to.equal('link');
    expect(await refusal(readUntrustedFile(root, 'venv-link/pyvenv.cfg', { maxBytes: 1024 }))).to.equal('link');
    expect(await refusal(readUntrustedFile(root, 'venv', { maxBytes: 1024 }))).to.equal('not-a-file');
    expect(await refusal(readUntrustedFile(root, 'big', { maxBytes: 4095 }))).to.equal('too-large');
    expect(await refusal(readUntrustedFile(root, 'nothing/here', { maxBytes: 1024 }))).to.equal('missing');
    expect(await refusal(readUntrustedFile(root, '../x', { maxBytes: 1024 }))).to.equal('bad-name');
    expect((await readUntrustedFile(root, 'big', { maxBytes: 4096 })).length).to.equal(4096);
  });

  it('blocks no file-system thread: 16 FIFOs at once, and an ordinary read still answers at once', async () => {
    const started = Date.now();
    const reads = Array.from({ length: 16 }, (_, i) =>
      refusal(readUntrustedFile(root, i % 2 ? 'fifo' : 'fifo-link', { maxBytes: 1024 })),
    );
    const problems = await within(3_000, Promise.all(reads));
    expect(problems.every((p) => p === 'not-a-file' || p === 'link')).to.equal(true);
    await within(1_000, fs.promises.readFile(path.join(root, 'venv', 'pyvenv.cfg')));
    expect(Date.now() - started).to.be.lessThan(3_000);
  });
});
