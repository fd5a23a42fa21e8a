// What every resilience drill shares: its report (Findings), waiting, and process checks. Drills run on the
// test stack (test/harness/stack.ts): inside `npm test`, or started by run.ts. Their processes are in
// processes.ts, the checks that runs came through a fault intact in run-checks.ts.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface DrillReport {
  name: string;
  /** The fault, as injected ("SIGKILL of the worker with 50 runs in flight"). */
  fault: string;
  /** How many faults were injected (kills, restarts, outages, bad requests). */
  faults: number;
  /** Records checked after the fault (runs, events, frames, answers). */
  checked: number;
  /** Records (runs, statuses, events, log lines, frames) that should exist and do not. */
  lost: number;
  /** Records or executions that exist more often than once. */
  duplicated: number;
  /** Other broken promises: a 5xx, a stuck run, a status that disagrees with its workflow, an orphan. */
  violations: string[];
  /** Measurements worth printing (recovery times, answers seen during the fault). */
  notes: string[];
  /** Counters the tests assert on (e.g. how many answers were 503). */
  facts: Record<string, number>;
  ms: number;
}

/** Collects a drill's findings; `violation` keeps the first few of each kind readable. */
export class Findings {
  checked = 0;
  lost = 0;
  duplicated = 0;
  faults = 0;
  readonly violations: string[] = [];
  readonly notes: string[] = [];
  readonly facts: Record<string, number> = {};
  private readonly started = Date.now();

  constructor(
    readonly name: string,
    readonly fault: string,
  ) {}

  violation(message: string): void {
    if (this.violations.length < 50) this.violations.push(message);
  }

  missing(n: number, what: string): void {
    if (n <= 0) return;
    this.lost += n;
    this.violation(`lost ${n} ${what}`);
  }

  twice(n: number, what: string): void {
    if (n <= 0) return;
    this.duplicated += n;
    this.violation(`duplicated ${n} ${what}`);
  }

  count(fact: string, by = 1): void {
    this.facts[fact] = (this.facts[fact] ?? 0) + by;
  }

  report(): DrillReport {
    return {
      name: this.name,
      fault: this.fault,
      faults: this.faults,
      checked: this.checked,
      lost: this.lost,
      duplicated: this.duplicated,
      violations: this.violations,
      notes: this.notes,
      facts: this.facts,
      ms: Date.now() - this.started,
    };
  }
}

export const passed = (r: DrillReport) => r.lost === 0 && r.duplicated === 0 && r.violations.length === 0;
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it answers a value (not undefined) or `timeoutMs` passes (then throws `what`). */
export async function until<T>(
  what: string,
  timeoutMs: number,
  check: () => Promise<T | undefined>,
  everyMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** A fresh directory (readable by the user processes of runs) that `cleanup` removes. */
export function tempDir(label: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `tarmac-drill-${label}-`));
  fs.chmodSync(dir, 0o777);
  return dir;
}

/** True while a process with this pid exists and is not a zombie. */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/State:\s+Z/.test(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}

/** Processes under `root` (children, grandchildren...), from ps. */
export function descendantsOf(root: number): Array<{ pid: number; command: string }> {
  const table = execFileSync('ps', ['-eo', 'pid=,ppid=,stat=,args='], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean)
    .map((l) => l.trim().match(/^(\d+)\s+(\d+)\s+(\S+)\s+(.*)$/)!)
    .filter(Boolean)
    .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), stat: m[3], command: m[4] }));
  const out: Array<{ pid: number; command: string }> = [];
  const walk = (p: number) => {
    for (const c of table.filter((t) => t.ppid === p)) {
      if (c.command.startsWith('ps ')) continue;
      if (!c.stat.startsWith('Z')) out.push({ pid: c.pid, command: c.command });
      walk(c.pid);
    }
  };
  walk(root);
  return out;
}

export interface DrillAnswer {
  status: number;
  text: string;
  retryAfter: string | null;
  body: any;
}

/**
 * Calls an api process as `key` with a deadline, answering status, text, Retry-After and the parsed JSON body;
 * rejects only when nothing answered (the process is down or the deadline passed).
 */
export function apiCaller(baseUrl: () => string, key: string, timeoutMs: number) {
  return async (method: string, p: string, body?: unknown): Promise<DrillAnswer> => {
    const res = await fetch(`${baseUrl()}${p}`, {
      method,
      signal: AbortSignal.timeout(timeoutMs),
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return {
      status: res.status,
      text,
      retryAfter: res.headers.get('retry-after'),
      body: res.headers.get('content-type')?.includes('json') && text ? JSON.parse(text) : undefined,
    };
  };
}
