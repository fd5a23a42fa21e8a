// Memory of the stack's processes, from /proc: this process (the bench; in the in-process shape also our api
// and worker), our api and worker processes (production shape), the embedded PostgreSQL processes and the
// Temporal dev server, all descendants of this process.
// PostgreSQL's backends share memory, so summing their RSS would count shared buffers many times; PSS
// (proportional set size, /proc/<pid>/smaps_rollup) splits shared pages among the processes using them.
import fs from 'node:fs';

export type Group = 'node' | 'api' | 'worker' | 'postgres' | 'temporal' | 'programs';

/** The api and worker processes of the production shape, by pid. */
const named = new Map<number, 'api' | 'worker'>();
export function setNamedPid(pid: number, group: 'api' | 'worker'): void {
  named.set(pid, group);
}

interface Proc {
  pid: number;
  ppid: number;
  comm: string;
}

function readProcs(): Proc[] {
  const out: Proc[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      // pid (comm) state ppid ...: comm may contain spaces and parentheses, so cut at the last ')'.
      const close = stat.lastIndexOf(')');
      const comm = stat.slice(stat.indexOf('(') + 1, close);
      const ppid = Number(stat.slice(close + 2).split(' ')[1]);
      out.push({ pid: Number(name), ppid, comm });
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

function descendants(root: number): Proc[] {
  const procs = readProcs();
  const children = new Map<number, Proc[]>();
  for (const p of procs) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  const out: Proc[] = [];
  const stack = [root];
  while (stack.length) {
    for (const c of children.get(stack.pop()!) ?? []) {
      out.push(c);
      stack.push(c.pid);
    }
  }
  return out;
}

/** PSS in bytes (RSS where smaps_rollup cannot be read). */
function pssBytes(pid: number): number {
  try {
    const m = /^Pss:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    if (m) return Number(m[1]) * 1024;
  } catch {
    // fall through
  }
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

function groupOf(p: Proc): Group | undefined {
  if (named.has(p.pid)) return named.get(p.pid);
  if (p.comm === 'postgres') return 'postgres';
  if (p.comm.startsWith('temporal')) return 'temporal';
  if (/^(python|node|setpriv|prlimit)/.test(p.comm)) return 'programs';
  return undefined;
}

/** `measure` summed per group over this process and its descendants (one that exited meanwhile is not counted). */
function perGroup(measure: (pid: number, group: Group) => number): Record<Group, number> {
  const totals: Record<Group, number> = {
    node: measure(process.pid, 'node'),
    api: 0,
    worker: 0,
    postgres: 0,
    temporal: 0,
    programs: 0,
  };
  for (const p of descendants(process.pid)) {
    const g = groupOf(p);
    try {
      if (g) totals[g] += measure(p.pid, g);
    } catch {
      // exited meanwhile
    }
  }
  return totals;
}

/** Memory (PSS, bytes) per group right now. */
export const memoryNow = (): Record<Group, number> => perGroup(pssBytes);

/**
 * CPU time (s) per group right now: its processes' user and system time; PostgreSQL's with what its ended
 * backends used (reaped by the postmaster), so that a pool's connection closed meanwhile is not lost.
 */
export const cpuNow = (): Record<Group, number> =>
  perGroup((pid, group) => cpuSeconds(pid) + (group === 'postgres' ? reapedCpuSeconds(pid) : 0));

/** Samples memory every `everyMs` until stopped; answers the peak of each group. */
export function sampleMemory(everyMs = 500): { stop(): Record<Group, number> } {
  const peak = memoryNow();
  const take = () => {
    const now = memoryNow();
    for (const g of Object.keys(peak) as Group[]) peak[g] = Math.max(peak[g], now[g]);
  };
  const timer = setInterval(take, everyMs);
  return {
    stop() {
      clearInterval(timer);
      take();
      return peak;
    },
  };
}

export const mb = (bytes: number) => bytes / (1024 * 1024);

/**
 * CPU seconds (user + system) a process, or one of its threads (`tid`), has used so far, from /proc: what a
 * loaded machine does not distort, unlike a rate (other processes take the CPUs, not the work's CPU time).
 */
export function cpuSeconds(pid: number, tid?: number): number {
  return statTicks(pid, tid, 11) / 100;
}

/** The threads of a Node process running a Temporal worker, by what they do (their names, /proc/<pid>/task/<tid>/comm). */
export type WorkerThread = 'main' | 'workflows' | 'v8' | 'core' | 'pool' | 'other';

const threadOf = (comm: string, processComm: string): WorkerThread =>
  comm === processComm || comm === 'MainThread'
    ? 'main' // the event loop: activities, the SDK's JS side
    : comm === 'WorkerThread'
      ? 'workflows' // the SDK's workflow thread (its vm contexts)
      : comm.startsWith('V8')
        ? 'v8' // V8's platform threads: concurrent GC marking and sweeping, compilation
        : comm.startsWith('tokio')
          ? 'core' // the SDK's Rust core: gRPC to Temporal, history and state machines
          : comm === 'libuv-worker'
            ? 'pool' // libuv's thread pool: file system calls, DNS, crypto
            : 'other';

/** CPU seconds (user + system) each kind of thread of process `pid` has used so far (threads that ended: lost). */
export function threadCpuSeconds(pid: number): Record<WorkerThread, number> {
  const out: Record<WorkerThread, number> = { main: 0, workflows: 0, v8: 0, core: 0, pool: 0, other: 0 };
  const processComm = fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const comm = fs.readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      out[threadOf(comm, processComm)] += cpuSeconds(pid, Number(tid));
    } catch {
      // ended meanwhile
    }
  }
  return out;
}

/** CPU seconds (user + system) of a process's children that ended and that it reaped (cutime + cstime). */
function reapedCpuSeconds(pid: number): number {
  return statTicks(pid, undefined, 13) / 100;
}

/** Two adjacent clock-tick fields of /proc/<pid>/stat summed, counted from the state field (utime is 11). */
function statTicks(pid: number, tid: number | undefined, first: number): number {
  const stat = fs.readFileSync(tid ? `/proc/${pid}/task/${tid}/stat` : `/proc/${pid}/stat`, 'utf8');
  // After "pid (comm) ": state is field 3; utime and stime are fields 14 and 15, in clock ticks (USER_HZ = 100).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[first]) + Number(fields[first + 1]);
}

/**
 * CPU seconds the whole machine has spent busy so far, every CPU (the first line of /proc/stat: user, nice,
 * system, irq, softirq, steal; idle and iowait left out). Over an interval, minus the stack's processes' own
 * time (cpuNow), it is what the rest did: the runs' sandboxes and programs, the kernel's threads, and anything
 * else on the machine (so it is read on a quiet machine only).
 */
export function machineCpuSeconds(): number {
  const [user, nice, system, , , irq, softirq, steal] = fs
    .readFileSync('/proc/stat', 'utf8')
    .split('\n')[0]
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  return (user + nice + system + irq + softirq + (steal || 0)) / 100;
}

/** The machine's CPU over a level split by part, per run (ms); in the in-process shape "bench" holds api and worker. */
export function cpuSplit(machine: number, before: Record<Group, number>, after: Record<Group, number>, runs: number) {
  const part = (g: Group) => Math.max(0, after[g] - before[g]);
  const parts = {
    api: part('api'),
    worker: part('worker'),
    postgres: part('postgres'),
    temporal: part('temporal'),
    bench: part('node'),
  };
  const rest = machine - Object.values(parts).reduce((a, b) => a + b, 0);
  const perRun = (s: number) => (s * 1e3) / runs;
  return {
    machine: perRun(machine),
    ...(Object.fromEntries(Object.entries(parts).map(([k, v]) => [k, perRun(v)])) as typeof parts),
    rest: perRun(Math.max(0, rest)),
  };
}
