// `node dist/bench/sandbox-spawn.js [--runs=N] [--steps] [--program=true|python] [--launcher-file=F] [--pasta=P]`: one sandboxed process alone,
// N times, through the path a run takes (Sandbox.open as the worker opens it, then per process: identity() →
// wrap() → startUserProcess → finished → release()), without the api, Temporal or PostgreSQL. Prints p50/p95
// wall ms of each part and the CPU ms of every process per spawn.
//
// CPU: this script re-runs itself under a small perl parent that is a child subreaper (prctl
// PR_SET_CHILD_SUBREAPER) and reaps every process that ends up its child. So a helper the launcher no longer
// waits for (orphaned, killed by its parent-death signal) is still counted: the perl parent's children's
// utime+stime at the end cover this script, everything it waited for, and every orphan.
//
// --steps: the launcher (network.ts) is given timestamps ($EPOCHREALTIME on stderr) at its steps, so the wall
// time of each step is printed too (the `run-path` section of bench/RESULTS.md). --launcher-file (a launcher's
// text, e.g. main's: `node -e "fs.writeFileSync(F, require('./dist/src/runtime/sandbox/network').LAUNCHER)"`) and
// --pasta (the helper's program) measure another variant with the same build, interleaved with this one.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config';
import { setSpawnMode } from '../src/runtime/process/spawn';
import { startUserProcess } from '../src/runtime/process/user-process';
import { Sandbox } from '../src/runtime/sandbox/sandbox';
import { LAUNCHER } from '../src/runtime/sandbox/network';
import { fmt, percentile } from './support/stats';

/** perl: become a subreaper, start the command, reap every child until none is left, print all their CPU. */
const REAPER = String.raw`
syscall(157, 36, 1) == 0 or die "prctl(PR_SET_CHILD_SUBREAPER): $!";
my $pid = fork() // die "fork: $!";
if ($pid == 0) { exec @ARGV or die "exec: $!"; }
my $status = 0;
while ((my $p = waitpid(-1, 0)) > 0) { $status = $? >> 8 if $p == $pid; }
my (undef, undef, $cu, $cs) = times();
print STDERR "reaper-cpu-ms " . int(($cu + $cs) * 1000) . "\n";
exit $status;`;

/** Where the launcher's steps are marked (a line of LAUNCHER that ends each step, and its name). */
const STEP_MARKS: Array<[RegExp, string]> = [
  [/^sandbox=\$!$/m, 'bwrap started'],
  [/^exec \{userns_w\}>&-$/m, 'uid mapped'],
  [/^helper=\$!$/m, 'loopback up, pasta started'],
  [/^exec \{ready_r\}<&- \{exec_w\}>&-.*$/m, 'pasta up (-P)'],
  [/^status=\$\?$/m, 'program ended (bwrap exited)'],
];
const STEP_END = 'launcher done';

function instrumented(launcher: string): string {
  let out = `echo "tarmac-step launcher-start $EPOCHREALTIME" >&2\n${launcher}`;
  for (const [re, name] of STEP_MARKS) {
    if (!re.test(out)) throw new Error(`sandbox-spawn --steps: no line ${re} in the launcher`);
    out = out.replace(re, (line) => `${line}\necho "tarmac-step ${name} $EPOCHREALTIME" >&2`);
  }
  // The launcher's last line is `exit $status`.
  return out.replace(/^exit \$status$/m, `echo "tarmac-step ${STEP_END} $EPOCHREALTIME" >&2\nexit $status`);
}

function childrenCpuMs(): number {
  // /proc/self/stat after the command (which may hold spaces) in parentheses: fields 14-17 utime stime cutime cstime.
  const fields = fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
  return (ticks * 1000) / 100; // USER_HZ
}

function summary(name: string, values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  return `${name.padEnd(60)} p50 ${fmt(percentile(sorted, 50)).padStart(7)}  p95 ${fmt(percentile(sorted, 95)).padStart(7)} ms`;
}

async function main(argv: string[]): Promise<void> {
  const arg = (name: string) => argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
  const reaped = argv.includes('--reaped');
  if (!reaped) {
    const child = spawn('perl', ['-e', REAPER, process.execPath, __filename, ...argv, '--reaped'], {
      stdio: ['ignore', 'inherit', 'pipe'],
    });
    let cpuBefore = 0;
    let runs = 1;
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (text: string) => {
      for (const line of text.split('\n')) {
        const m = /^(cpu-before-loop|runs|reaper-cpu-ms) (\d+)$/.exec(line);
        if (!m) {
          if (line) process.stderr.write(`${line}\n`);
          continue;
        }
        if (m[1] === 'cpu-before-loop') cpuBefore = Number(m[2]);
        else if (m[1] === 'runs') runs = Number(m[2]);
        else
          console.log(
            `CPU of every process per spawn (this script's share included): ${fmt((Number(m[2]) - cpuBefore) / runs)} ms`,
          );
      }
    });
    const code = await new Promise<number>((resolve) => child.once('exit', (c) => resolve(c ?? 1)));
    process.exit(code);
  }
  const runs = Number(arg('runs') ?? 20);
  const steps = argv.includes('--steps');
  const launcherFile = arg('launcher-file');
  const pasta = arg('pasta');
  const program = arg('program') === 'python' ? ['/usr/bin/python3', '-c', 'print(1)'] : ['/bin/true'];
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tarmac-sandbox-spawn-'));
  const config = loadConfig({ DATA_DIR: dataDir, SANDBOX: 'on' });
  // Inline: the chain is this process's child, so its CPU is counted when it is reaped.
  setSpawnMode('inline');
  const log = { warn: (o: unknown, m?: string) => console.error('warn', m ?? '', JSON.stringify(o)), info() {} };
  const sandbox = await Sandbox.open(config.sandbox, { log: log as never, apiBaseUrl: 'http://127.0.0.1:1' });
  const home = fs.mkdtempSync(path.join(config.sandbox.stateDir, 'spawn-'));
  const timings: Record<string, number[]> = {};
  const add = (k: string, v: number) => (timings[k] ??= []).push(v);
  process.stderr.write(`cpu-before-loop ${Math.round(childrenCpuMs())}\nruns ${runs}\n`);
  const cpuStart = childrenCpuMs();
  try {
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      const identity = await sandbox.identity(config.sandbox.gidBase, 256 * 1024 * 1024);
      const t1 = performance.now();
      const w = sandbox.wrap({
        file: program[0],
        argv: program.slice(1),
        cwd: '/',
        home,
        memoryBytes: 256 << 20,
        identity,
      });
      // A/B in one build: another launcher's text (e.g. main's, saved to a file) and another pasta program.
      const at = w.argv.indexOf(LAUNCHER);
      const argvOf = [...w.argv];
      if (launcherFile) argvOf[at] = fs.readFileSync(launcherFile, 'utf8');
      if (pasta) argvOf[at + 2] = pasta;
      if (steps) argvOf[at] = instrumented(argvOf[at]);
      const marks: Array<[string, number]> = [];
      const spawnedAt = Date.now();
      const proc = await startUserProcess({
        file: w.file,
        argv: argvOf,
        cwd: '/',
        env: { PATH: '/usr/bin:/bin' },
        extraFiles: w.extraFiles,
        envArgsFd: w.envArgsFd,
        readExit: w.readExit,
        onLine: (stream, line) => {
          const m = /^tarmac-step (.+) (\d+\.\d+)$/.exec(line);
          if (m) marks.push([m[1], Number(m[2]) * 1000]);
          else if (stream === 'stderr') console.error(`run ${i}: ${line}`);
        },
      });
      const status = await proc.finished;
      const exitSeenAt = Date.now();
      const t2 = performance.now();
      if (status.code !== 0) console.error(`run ${i}: exit ${JSON.stringify(status)}`);
      await identity!.release();
      const t3 = performance.now();
      add('identity (uid lease, cgroup)', t1 - t0);
      add('spawn → exited (the whole chain)', t2 - t1);
      add('release (cgroup, uid sweep)', t3 - t2);
      add('total', t3 - t0);
      if (marks.length)
        add('  step: spawn → launcher start (sh joins the group, setpriv, bash)', marks[0][1] - spawnedAt);
      for (let k = 1; k < marks.length; k++) add(`  step: ${marks[k][0]}`, marks[k][1] - marks[k - 1][1]);
      if (marks.length) add('  step: launcher done → exit seen by node', exitSeenAt - marks[marks.length - 1][1]);
    }
  } finally {
    await sandbox.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(home, { recursive: true, force: true });
  }
  const cpu = (childrenCpuMs() - cpuStart) / runs;
  console.log(
    `sandbox-spawn: ${runs} × ${program.join(' ')}, load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  for (const [k, v] of Object.entries(timings)) console.log(summary(k, v));
  console.log(`CPU of this script and the processes it reaped, per spawn: ${fmt(cpu)} ms`);
}

main(process.argv.slice(2)).then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
