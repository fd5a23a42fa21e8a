// Packing a build: the artifact unpacks (artifact-unpack.ts) to the same tree as the normalized build, the same
// tree packs to the same bytes, and what no worker could unpack (a FIFO, a relative link climbing out of the
// build) is normalized in the builder's own copy first.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { packBuild } from '../../../../src/runtime/build/artifact-pack';
import { unpackBuild } from '../../../../src/runtime/build/artifact-unpack';

/** Every entry under `root`: its kind, mode bits, and content or link target. */
function treeOf(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of fs.readdirSync(root, { recursive: true }) as string[]) {
    const at = path.join(root, name);
    const st = fs.lstatSync(at);
    if (st.isSymbolicLink()) out[name] = `link ${fs.readlinkSync(at)}`;
    else if (st.isDirectory()) out[name] = 'dir';
    else out[name] = `file ${(st.mode & 0o111 ? 'x ' : '') + fs.readFileSync(at, 'utf8')}`;
  }
  return out;
}

describe('build artifact packing', () => {
  let dir: string;
  let build: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tarmac-pack-'));
    build = path.join(dir, 'builds', 'b');
    fs.mkdirSync(path.join(build, 'src', 'pkg'), { recursive: true });
    fs.mkdirSync(path.join(build, 'venv', 'bin'), { recursive: true });
    fs.writeFileSync(path.join(build, 'manifest.json'), '{"version":1}');
    fs.writeFileSync(path.join(build, 'src', 'main.py'), 'print("hi")\n');
    fs.writeFileSync(path.join(build, 'src', 'run.sh'), '#!/bin/sh\n', { mode: 0o750 });
    fs.writeFileSync(path.join(build, 'src', 'pkg', 'empty'), '');
    fs.symlinkSync('/usr/bin/python3', path.join(build, 'venv', 'bin', 'python3'));
    fs.symlinkSync('python3', path.join(build, 'venv', 'bin', 'python'));
    fs.symlinkSync('../../etc', path.join(build, 'src', 'climbs-out'));
    execFileSync('mkfifo', [path.join(build, 'src', 'fifo')]);
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('unpacks to the same tree as the normalized build, and packs the same tree to the same bytes', async () => {
    const packed = await packBuild(build, path.join(dir, 'a.tar.gz'));
    const bytes = fs.readFileSync(path.join(dir, 'a.tar.gz'));
    expect(packed.size).to.equal(bytes.length);
    expect(packed.sha256).to.equal(createHash('sha256').update(bytes).digest('hex'));

    // Normalized in place: the FIFO is gone, the climbing link names the absolute path it resolved to.
    expect(fs.existsSync(path.join(build, 'src', 'fifo'))).to.equal(false);
    expect(fs.readlinkSync(path.join(build, 'src', 'climbs-out'))).to.equal(path.join(dir, 'builds', 'etc'));

    const dest = path.join(dir, 'unpacked');
    const unpackedBytes = await unpackBuild(path.join(dir, 'a.tar.gz'), dest, 1024 * 1024);
    expect(treeOf(dest)).to.deep.equal(treeOf(build));
    expect(treeOf(dest)['venv/bin/python3']).to.equal('link /usr/bin/python3');
    expect(unpackedBytes).to.equal(packed.unpackedBytes);

    const again = await packBuild(build, path.join(dir, 'b.tar.gz'));
    expect(again.sha256).to.equal(packed.sha256);
  });
});
