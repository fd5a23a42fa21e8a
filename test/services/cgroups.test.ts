// The control group of a run, on this host's real kernel (cgroup v2 with controllers, or the v1 controllers):
// created with its limits, entered by a process before it runs, holding the memory of all its processes
// together, counting refused forks, killed as a whole (a setsid double fork too) and removed. Fails closed:
// a group that cannot be made is not half-made, and a worker without control groups refuses user code.
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { CgroupTree, CgroupUnavailable, entryCommand, groupsOf, RunGroup } from '../../src/runtime/sandbox/cgroups';
import { processAlive } from '../support/runs';
import { getStack } from '../support/stack';

const DIST = path.join(__dirname, '..', '..');
const MiB = 1024 * 1024;
// Far from the uids and gids the stack's runs lease (SANDBOX_UID_BASE, SANDBOX_GID_BASE).
const GID = 399_990;
let uid = 299_990;

/** The group's directory holding `file` (v1: one directory per controller). */
function fileOf(group: RunGroup, file: string): string {
  const found = group.procsFiles.map((f) => path.join(path.dirname(f), file)).find((f) => fs.existsSync(f));
  if (!found) throw new Error(`no ${file} in ${group.procsFiles.join(', ')}`);
  return found;
}

/** Runs `sh -c script` inside the group (entered first, as the sandbox's chain does); resolves with its stdout. */
function runIn(group: RunGroup, script: string): Promise<{ code: number | null; stdout: string }> {
  const entry = entryCommand(group, '/bin/sh');
  const child = spawn(entry.file, [...entry.prefix, '/bin/sh', '-c', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout })));
}

describe('control groups of runs', function () {
  this.timeout(60_000);
  let tree: CgroupTree;

  before(() => {
    tree = CgroupTree.open({ platformWeight: getStack().config.sandbox.platformCpuWeight });
  });

  it('creates a run group with its limits under the organization, enters a process before it runs, kills every process of it (a setsid double fork too) and removes it', async () => {
    const group = await tree.createRun(GID, uid++, { memoryBytes: 64 * MiB, maxProcesses: 32 });
    const memoryLimit = tree.version === 2 ? 'memory.max' : 'memory.limit_in_bytes';
    expect(Number(fs.readFileSync(fileOf(group, memoryLimit), 'utf8'))).to.equal(64 * MiB);
    expect(fs.readFileSync(fileOf(group, 'pids.max'), 'utf8').trim()).to.equal('32');
    for (const f of group.procsFiles) expect(f).to.match(new RegExp(`/tarmac/runs/org-${GID}/run-\\d+/cgroup.procs$`));

    // The shell prints its pid, then a double-forked sleeper in a session of its own prints its pid.
    const started = runIn(group, 'echo $$; setsid -f sh -c "echo \\$\\$; exec sleep 300 >/dev/null"; sleep 0.3');
    const { stdout } = await started;
    const [shell, escaped] = stdout.trim().split('\n').map(Number);
    expect(processAlive(escaped), 'the double-forked sleeper runs').to.equal(true);
    expect(fs.readFileSync(`/proc/${escaped}/stat`, 'utf8').split(' ')[5], 'its own session').to.equal(String(escaped));
    const inGroup = [...groupsOf(escaped).values()].filter((g) =>
      g.endsWith(path.basename(path.dirname(group.procsFiles[0]))),
    );
    expect(inGroup.length, `the sleeper is in the run's group in every hierarchy: ${[...groupsOf(escaped)]}`).to.equal(
      group.procsFiles.length,
    );
    expect(shell).to.be.above(0);

    await group.destroy();
    expect(processAlive(escaped), 'killed with its group').to.equal(false);
    for (const f of group.procsFiles) expect(fs.existsSync(path.dirname(f)), `${f} removed`).to.equal(false);
    for (const f of group.procsFiles)
      expect(fs.existsSync(path.dirname(path.dirname(f))), 'the emptied organization group too').to.equal(false);
  });

  it('holds the memory of all its processes together under the limit and counts the kill', async () => {
    const group = await tree.createRun(GID, uid++, { memoryBytes: 128 * MiB, maxProcesses: 64 });
    try {
      // Four processes that each touch 64 MiB: 256 MiB asked for under 128 MiB.
      const hog = `python3 -c 'import os, time
pids = []
for i in range(4):
    pid = os.fork()
    if pid == 0:
        b = bytearray(64 * 1024 * 1024)
        time.sleep(1)
        os._exit(0)
    pids.append(pid)
print(sum(1 for p in pids if os.waitpid(p, 0)[1] != 0))'`;
      const before = group.counters();
      const { stdout } = await runIn(group, hog);
      const after = group.counters();
      console.log(`      peak ${(group.peakMemoryBytes() ?? 0) / MiB} MiB; ${stdout.trim()} of 4 processes killed`);
      expect(Number(stdout.trim())).to.be.at.least(1);
      expect(after.oomKills - before.oomKills).to.be.at.least(1);
      const peak = group.peakMemoryBytes();
      if (peak !== undefined) expect(peak).to.be.at.most(128 * MiB);
    } finally {
      await group.destroy();
    }
  });

  it('refuses forks past pids.max and counts it', async () => {
    const group = await tree.createRun(GID, uid++, { memoryBytes: 256 * MiB, maxProcesses: 16 });
    try {
      const { stdout } = await runIn(
        group,
        'n=0; while [ $n -lt 40 ]; do sleep 5 >/dev/null & n=$((n+1)); done 2>/dev/null; echo $(jobs -p | wc -l)',
      );
      expect(Number(stdout.trim())).to.be.below(16);
      expect(group.counters().processLimitHits).to.be.at.least(1);
    } finally {
      await group.destroy();
    }
  });

  it('sweeps the groups a dead worker left (their uid not leased), with what still runs in them, and nothing else', async () => {
    const leftover = await tree.createRun(GID, uid++, { memoryBytes: 64 * MiB, maxProcesses: 16 });
    const live = await tree.createRun(GID, uid++, { memoryBytes: 64 * MiB, maxProcesses: 16 });
    try {
      const { stdout } = await runIn(leftover, 'setsid -f sh -c "echo \\$\\$; exec sleep 300 >/dev/null"; sleep 0.3');
      const orphan = Number(stdout.trim());
      expect(processAlive(orphan)).to.equal(true);
      const leftoverUid = Number(/run-(\d+)/.exec(leftover.procsFiles[0])![1]);
      expect(await tree.sweep((u) => u !== leftoverUid)).to.equal(1);
      expect(processAlive(orphan), 'killed with its group').to.equal(false);
      for (const f of leftover.procsFiles) expect(fs.existsSync(f), `${f} removed`).to.equal(false);
      for (const f of live.procsFiles) expect(fs.existsSync(f), `${f} kept`).to.equal(true);
    } finally {
      await leftover.destroy();
      await live.destroy();
    }
  });

  it('fails closed: a group whose limits cannot be written is not made, and Sandbox.identity refuses the run', async () => {
    const leased = uid++;
    const err = await tree.createRun(GID, leased, { memoryBytes: NaN, maxProcesses: 16 }).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err).to.be.instanceOf(CgroupUnavailable);
    expect(err!.message).to.match(/cannot create the run's control group/);
    for (const root of tree.roots)
      expect(fs.existsSync(path.join(root, 'runs', `org-${GID}`, `run-${leased}`)), 'nothing half-made').to.equal(
        false,
      );

    const { sandbox } = getStack().activityDeps;
    const refused = await sandbox.identity(GID, NaN).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(refused).to.be.instanceOf(CgroupUnavailable);
  });

  it('refuses to open the sandbox (SandboxUnavailable) on a host without control groups', async () => {
    // A mount namespace of its own where /sys/fs/cgroup is an empty directory: no hierarchy at all.
    const script = `
      const { Sandbox } = require(${JSON.stringify(path.join(DIST, 'src/runtime/sandbox/sandbox.js'))});
      const { loadConfig } = require(${JSON.stringify(path.join(DIST, 'src/config/index.js'))});
      const config = loadConfig({ DATA_DIR: '/tmp/tarmac-cgroup-refusal', SANDBOX_STATE_DIR: '/tmp/tarmac-cgroup-refusal/state' });
      Sandbox.open(config.sandbox, { log: { warn() {}, info() {} }, apiBaseUrl: 'http://127.0.0.1:1' })
        .then(() => { console.log('opened'); process.exit(0); }, (err) => { console.log(err.constructor.name + ': ' + err.message); process.exit(3); });`;
    const err = await promisify(execFile)('unshare', [
      '--mount',
      '--propagation',
      'private',
      '/bin/sh',
      '-c',
      'mount -t tmpfs none /sys/fs/cgroup && exec "$0" -e "$1"',
      process.execPath,
      script,
    ]).then(
      () => undefined,
      (e: { code: number; stdout: string; stderr: string }) => e,
    );
    expect(err, 'the sandbox opened without control groups').to.not.equal(undefined);
    expect(err!.code, err!.stderr).to.equal(3);
    expect(err!.stdout).to.match(
      /^SandboxUnavailable: cannot isolate user code on this host: no control group for each run/,
    );
    expect(err!.stdout).to.include('SANDBOX=off');
  });
});
