// Attacks on the machine's memory, CPU, process table and file table, and on the hypervisor's sockets, by
// an ordinary organization through the public api. What answers them: the run's control group (memory of
// the whole run, pids, a CPU weight per organization), the sized /dev/shm, RLIMIT_NOFILE, the run group's
// open-files watch and the seccomp filter's socket families (src/runtime/sandbox/). Measured from the host where the api cannot tell: the
// run group's peak memory.
import fs from 'node:fs';
import { entriesOf, makeArchive, uploadToNewBucket, waitForDeployment, config } from '../../fixtures/projects';
import { memoryHogs, watchRunMemory } from '../../harness/cgroups';
import { as } from '../../harness/client';
import { waitForRun } from '../../harness/runs';
import { newTenant } from '../../harness/stack';
import type { MachineAttack, MachineAttackContext } from './kit';

const MiB = 1024 * 1024;

/** Deploys `program` as a python structure through the api; answers its id. */
async function deploy(key: string, program: string): Promise<string> {
  const zip = makeArchive(
    'zip',
    entriesOf({ 'structure_config.yaml': config('python3', '  main_file: main.py\n'), 'main.py': program }),
  );
  const bucketId = await uploadToNewBucket(key, 'code.zip', zip);
  const created = await as(key).post('/api/structures', {
    name: 'machine-drill',
    code: { data_lake: { bucket_id: bucketId, asset_path: 'code.zip' } },
  });
  if (created.status !== 201) throw new Error(`creating a structure answered ${created.status} ${created.text}`);
  const deployment = await waitForDeployment(key, created.body.latest_deployment_id);
  if (deployment.status !== 'SUCCEEDED') throw new Error(`deployment ${JSON.stringify(deployment.status_detail)}`);
  return created.body.structure_id;
}

async function startRun(key: string, structureId: string, args: string[] = []): Promise<string> {
  const created = await as(key).post(`/api/structures/${structureId}/runs`, { args });
  if (created.status !== 201) throw new Error(`starting a run answered ${created.status} ${created.text}`);
  return created.body.structure_run_id;
}

/** Runs `program` once as a fresh organization; answers the ended run and its logs. */
async function runOnce(program: string, timeoutMs = 90_000, opts: { watchMemory?: boolean } = {}) {
  const t = await newTenant('machine');
  const structureId = await deploy(t.key, program);
  const watch = opts.watchMemory ? await watchRunMemory(t.organizationId) : undefined;
  const runId = await startRun(t.key, structureId);
  const run = await waitForRun(t.key, runId, undefined, timeoutMs);
  const peak = watch?.stop();
  const logs: string[] = (await as(t.key).get(`/api/structure-runs/${runId}/logs`)).body.logs;
  return { run, logs, peak };
}

const detail = (run: any) => `${run.status} ${run.status_detail?.reason ?? ''}`.trim();

const memoryAcrossProcesses: MachineAttack = {
  name: 'memory-across-processes',
  limit: 'RUN_MEMORY_LIMIT_MB (the run’s control group)',
  async run({ stack, note }) {
    const limitMb = stack.config.runLimits.memoryMb;
    // Four processes, each after half the limit: twice the limit together.
    const each = limitMb / 2;
    const { run, logs, peak } = await runOnce(memoryHogs(each), 90_000, { watchMemory: true });
    const peakMb = Math.round((peak ?? 0) / MiB);
    note(`4 × ${each} MiB asked for under ${limitMb} MiB: group peak ${peakMb} MiB; ${logs.at(-1)}; ${detail(run)}`);
    return {
      held: run.status_detail?.reason === 'MemoryLimitExceeded' && (peak ?? 0) <= limitMb * MiB && peakMb > 0,
      result: `4 × ${each} MiB: peak ${peakMb} MiB ≤ ${limitMb} MiB; ${detail(run)}`,
    };
  },
};

const devShmFill: MachineAttack = {
  name: 'dev-shm-fill',
  limit: 'SANDBOX_SHM_MB',
  async run({ stack, quick }) {
    const tryMb = quick ? 1024 : 5120;
    const { run, logs } = await runOnce(`import errno
written = 0
try:
    with open("/dev/shm/fill", "wb") as f:
        while written < ${tryMb} * 1024 * 1024:
            f.write(b"x" * 1048576)
            f.flush()
            written += 1048576
    print("wrote", written, "OK")
except OSError as e:
    print("wrote", written, errno.errorcode[e.errno])
`);
    const [, bytes, outcome] = (logs.find((l) => l.startsWith('wrote ')) ?? 'wrote ? ?').split(' ');
    const shm = stack.config.sandbox.shmBytes;
    return {
      held: Number(bytes) <= shm && outcome !== 'OK',
      result: `tried ${tryMb} MiB: wrote ${Math.round(Number(bytes) / MiB)} MiB, then ${outcome}; ${detail(run)}`,
    };
  },
};

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * q)];

const cpuStorm: MachineAttack = {
  name: 'cpu-storm',
  limit: 'a CPU weight per organization (control groups)',
  async run({ quick, note }: MachineAttackContext) {
    const processes = 200;
    const seconds = quick ? 10 : 20;
    const samples = quick ? 3 : 5;
    const victim = await newTenant('cpu-victim');
    const attacker = await newTenant('cpu-storm');
    const trivial = await deploy(victim.key, 'print("done")\n');
    // Busy processes, each in a session of its own (setsid), each ending by itself after `seconds`.
    const storm = await deploy(
      attacker.key,
      `import os, sys, time
end = time.time() + float(sys.argv[1])
for i in range(${processes}):
    if os.fork() == 0:
        os.setsid()
        while time.time() < end:
            pass
        os._exit(0)
print("storm started")
while time.time() < end:
    time.sleep(0.2)
`,
    );
    const timedRun = async () => {
      const started = Date.now();
      const run = await waitForRun(victim.key, await startRun(victim.key, trivial), undefined, 120_000);
      if (run.status !== 'SUCCEEDED') throw new Error(`the victim's run ended ${detail(run)}`);
      return Date.now() - started;
    };
    await timedRun(); // warm
    const quiet: number[] = [];
    for (let i = 0; i < samples; i++) quiet.push(await timedRun());
    const stormRun = await startRun(attacker.key, storm, [String(seconds)]);
    await waitForRun(attacker.key, stormRun, (r) => r.status === 'RUNNING', 60_000);
    await new Promise((r) => setTimeout(r, 2_000)); // every busy process forked
    const stormStart = Date.now();
    const busy: number[] = [];
    while (busy.length < samples || (Date.now() - stormStart < (seconds - 4) * 1000 && busy.length < samples * 3))
      busy.push(await timedRun());
    const inStorm = Date.now() - stormStart < (seconds - 2) * 1000;
    const ended = await waitForRun(attacker.key, stormRun, undefined, 120_000);
    const quietP50 = quantile(quiet, 0.5);
    const busyP50 = quantile(busy, 0.5);
    const ratio = busyP50 / quietP50;
    note(
      `quiet ${quiet.join(', ')} ms; during ${processes} busy processes ${busy.join(', ')} ms; storm run ${detail(ended)}` +
        (inStorm ? '' : ' (the last samples ran after the storm had ended)'),
    );
    return {
      held: ratio <= 2,
      result: `another organization's run p50 ${quietP50} ms quiet, ${busyP50} ms during ${processes} busy processes (${ratio.toFixed(2)}×, at most 2×)`,
    };
  },
};

const processCount: MachineAttack = {
  name: 'process-count',
  limit: 'SANDBOX_MAX_PROCESSES (pids.max of the run’s group)',
  async run({ stack }) {
    const { run, logs } = await runOnce(`import errno, os, time
n = 0
try:
    while n < 100000:
        if os.fork() == 0:
            time.sleep(3)
            os._exit(0)
        n += 1
except OSError as e:
    print("forked", n, errno.errorcode[e.errno])
    raise SystemExit(1)
print("forked", n, "OK")
`);
    const [, count, outcome] = (logs.find((l) => l.startsWith('forked ')) ?? 'forked ? ?').split(' ');
    const max = stack.config.sandbox.maxProcesses;
    return {
      held: Number(count) < max && run.status_detail?.reason === 'ProcessLimitExceeded',
      result: `forked ${count} of ${max}, then ${outcome}; ${detail(run)}`,
    };
  },
};

const openFiles: MachineAttack = {
  name: 'open-files',
  limit: 'SANDBOX_MAX_OPEN_FILES (RLIMIT_NOFILE)',
  async run({ stack }) {
    const { run, logs } = await runOnce(`import errno
files = []
try:
    while len(files) < 1000000:
        files.append(open("/dev/null"))
    print("opened", len(files), "OK")
except OSError as e:
    print("opened", len(files), errno.errorcode[e.errno])
`);
    const [, count, outcome] = (logs.find((l) => l.startsWith('opened ')) ?? 'opened ? ?').split(' ');
    const max = stack.config.sandbox.maxOpenFiles;
    return {
      held: Number(count) <= max && outcome === 'EMFILE',
      result: `opened ${count} files, then ${outcome} (limit ${max}); ${detail(run)}`,
    };
  },
};

/** The host's file table now: allocated file handles and fs.file-max (/proc/sys/fs/file-nr). */
function hostFileTable(): { used: number; max: number } {
  const [used, , max] = fs.readFileSync('/proc/sys/fs/file-nr', 'utf8').trim().split(/\s+/).map(Number);
  return { used, max };
}

/**
 * Many processes, each opening files to its RLIMIT_NOFILE: their product (SANDBOX_MAX_PROCESSES ×
 * SANDBOX_MAX_OPEN_FILES) would be 40 % of a 24 GB host's table; the run's open-files watch ends it first.
 */
const openFilesAcrossProcesses: MachineAttack = {
  name: 'open-files-across-processes',
  limit: 'SANDBOX_MAX_RUN_OPEN_FILES (the run group counted every 250 ms)',
  async run({ stack, quick }) {
    const processes = quick ? 32 : 128;
    const before = hostFileTable();
    let peak = before.used;
    const sampler = setInterval(() => (peak = Math.max(peak, hostFileTable().used)), 10);
    let ended;
    try {
      ended = await runOnce(`import os, time
kids = []
for i in range(${processes}):
    pid = os.fork()
    if pid == 0:
        files = []
        try:
            while len(files) < 1000000:
                files.append(open("/dev/null"))
        except OSError:
            pass
        time.sleep(30)
        os._exit(0)
    kids.append(pid)
print("forked", len(kids), flush=True)
for pid in kids:
    os.waitpid(pid, 0)
print("all children ended")
`);
    } finally {
      clearInterval(sampler);
    }
    const { run } = ended;
    const max = stack.config.sandbox.maxRunOpenFiles;
    const share = (peak - before.used) / before.max;
    return {
      held: run.status === 'ERROR' && run.status_detail?.reason === 'OpenFilesLimitExceeded' && share < 0.25,
      result:
        `${processes} processes × ${stack.config.sandbox.maxOpenFiles} files at most; ${detail(run)} (limit ${max}); ` +
        `the host's table rose by ${peak - before.used} at its peak (${(share * 100).toFixed(1)} % of fs.file-max ${before.max})`,
    };
  },
};

const vsock: MachineAttack = {
  name: 'vsock',
  limit: 'seccomp socket families (IPv4, IPv6, route netlink)',
  async run() {
    const { run, logs } = await runOnce(`import errno, socket
for name, family, kind in [("vsock", 40, socket.SOCK_STREAM), ("packet", 17, socket.SOCK_RAW)]:
    try:
        socket.socket(family, kind).close()
        print(name, "opened")
    except OSError as e:
        print(name, errno.errorcode[e.errno])
`);
    const said = logs.filter((l) => l.startsWith('vsock ') || l.startsWith('packet ')).join(', ');
    return { held: !said.includes('opened') && said.includes('vsock'), result: `${said}; ${detail(run)}` };
  },
};

export const attacks: MachineAttack[] = [
  memoryAcrossProcesses,
  devShmFill,
  cpuStorm,
  processCount,
  openFiles,
  openFilesAcrossProcesses,
  vsock,
];
