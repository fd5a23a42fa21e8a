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
function perGroup(measure: (pid: number) => number): Record<Group, number> {
  const totals: Record<Group, number> = {
    node: measure(process.pid),
    api: 0,
    worker: 0,
    postgres: 0,
    temporal: 0,
    programs: 0,
  };
  for (const p of descendants(process.pid)) {
    const g = groupOf(p);
    try {
      if (g) totals[g] += measure(p.pid);
    } catch {
      // exited meanwhile
    }
  }
  return totals;
}

/** Memory (PSS, bytes) per group right now. */
export const memoryNow = (): Record<Group, number> => perGroup(pssBytes);

/** CPU time (s) per group right now: its processes' user and system time. */
export const cpuNow = (): Record<Group, number> => perGroup((pid) => cpuSeconds(pid));

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
  const stat = fs.readFileSync(tid ? `/proc/${pid}/task/${tid}/stat` : `/proc/${pid}/stat`, 'utf8');
  // After "pid (comm) ": state is field 3; utime and stime are fields 14 and 15, in clock ticks (USER_HZ = 100).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
