// The per-run bound on the host's file table (src/runtime/sandbox/open-files.ts): the default follows from the
// host's fs.file-max and the worker's slots; a group's open descriptors are counted across its processes; a
// watched group past its bound has its processes killed and counts the hit, and the watch ends with the group.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { RunGroup } from '../../../../src/runtime/sandbox/cgroups';
import {
  defaultRunOpenFiles,
  HOST_FILE_TABLE_SHARE,
  openFilesOf,
  watchOpenFiles,
} from '../../../../src/runtime/sandbox/open-files';

describe('the open files of a run', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'open-files-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** A stand-in group whose cgroup.procs lists `pids`. */
  const groupOf = (pids: number[], destroyed: { n: number }): RunGroup => {
    const procs = path.join(dir, 'cgroup.procs');
    fs.writeFileSync(procs, pids.map((p) => `${p}\n`).join(''));
    return {
      procsFiles: [procs],
      entryFiles: [procs],
      counters: () => ({ oomKills: 0, processLimitHits: 0 }),
      peakMemoryBytes: () => undefined,
      destroy: async () => void destroyed.n++,
    };
  };

  it('defaults to half the host table over the runs a worker executes at once, within [1,024, 1 M]', () => {
    expect(defaultRunOpenFiles(2_466_116, 100)).to.equal(Math.floor((2_466_116 * HOST_FILE_TABLE_SHARE) / 100));
    expect(defaultRunOpenFiles(100_000, 10_000)).to.equal(1024);
    expect(defaultRunOpenFiles(2 ** 62, 1)).to.equal(1_048_576);
    expect(defaultRunOpenFiles(undefined, 100)).to.equal(65_536);
  });

  it("counts the descriptors of the group's processes", async () => {
    const held = Array.from({ length: 20 }, () => fs.openSync('/dev/null', 'r'));
    try {
      const procs = path.join(dir, 'cgroup.procs');
      fs.writeFileSync(procs, `${process.pid}\n999999999\n`);
      const n = await openFilesOf(procs, 1_000_000);
      expect(n).to.be.at.least(20 + 3);
      expect(await openFilesOf(procs, 5))
        .to.be.above(5)
        .and.at.most(n);
    } finally {
      for (const fd of held) fs.closeSync(fd);
    }
  });

  it('kills the processes of a group past its bound and counts the hit; a group within it is left alone', async () => {
    const child = spawn('sleep', ['30'], { stdio: 'ignore' });
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('exit', (_code, signal) => resolve(signal)),
    );
    const destroyed = { n: 0 };
    const within = watchOpenFiles(groupOf([child.pid!], destroyed), 1000, 20);
    await new Promise((r) => setTimeout(r, 100));
    expect(within.counters().openFileLimitHits).to.equal(0);
    await within.destroy();
    const past = watchOpenFiles(groupOf([child.pid!], destroyed), 0, 20);
    expect(await exited).to.equal('SIGKILL');
    expect(past.counters()).to.include({ oomKills: 0, processLimitHits: 0 });
    expect(past.counters().openFileLimitHits).to.be.at.least(1);
    await past.destroy();
    expect(destroyed.n).to.equal(2);
  });
});
