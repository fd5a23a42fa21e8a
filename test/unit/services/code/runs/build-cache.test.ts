// A worker reads a build's manifest once (build directories are immutable): later runs of the build get the
// manifest read the first time, and a build that could not be read is read again by the next run.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { BuildUnreadable, manifestOfBuild } from '../../../../../src/services/code/runs/build-cache';
import { writeManifest, type BuildManifest } from '../../../../../src/runtime/manifest';

describe('build cache', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'build-cache-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const manifest = (): BuildManifest => ({
    version: 1,
    runtime: 'nodejs',
    workDir: dir,
    interpreter: process.execPath,
    mainFile: 'main.js',
  });

  it('reads a build once and answers the same manifest to later runs', async () => {
    await writeManifest(dir, manifest());
    const first = await manifestOfBuild(dir);
    expect(first).to.deep.equal(manifest());
    // The file is gone: a second read would fail, the remembered manifest does not.
    fs.rmSync(path.join(dir, 'manifest.json'));
    expect(await manifestOfBuild(dir)).to.equal(first);
  });

  it('does not remember a build that could not be read, nor one that is incomplete', async () => {
    const unreadable = await manifestOfBuild(dir).catch((err: unknown) => err);
    expect(unreadable).to.be.instanceOf(BuildUnreadable).with.property('what', 'cannot be read');
    await writeManifest(dir, { ...manifest(), interpreter: path.join(dir, 'no-such-interpreter') });
    const incomplete = await manifestOfBuild(dir).catch((err: unknown) => err);
    expect(incomplete).to.be.instanceOf(BuildUnreadable).with.property('what', 'is incomplete');
    await writeManifest(dir, manifest());
    expect(await manifestOfBuild(dir)).to.deep.equal(manifest());
  });
});
