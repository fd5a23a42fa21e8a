// What every resilience drill shares: its report, real api and worker processes it may kill, a restartable
// Temporal dev server and PostgreSQL, and the checks that a set of runs came through a fault intact.
// Drills run on the test stack (test/support/stack.ts): inside `npm test`, or started by run.ts.
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { DataSource } from 'typeorm';
import { childEnv } from '../../src/config';
import { temporalCli } from '../../src/temporal/binaries';
import { SEARCH_ATTRIBUTES } from '../../src/temporal/search-attributes';
import { workflowIdOf } from '../../src/temporal/workflow-start';
import { freePort, getStack } from '../support/stack';

const DIST = path.resolve(__dirname, '..', '..');

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

  constructor(readonly name: string, readonly fault: string) {}

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
      name: this.name, fault: this.fault, faults: this.faults, checked: this.checked, lost: this.lost, duplicated: this.duplicated,
      violations: this.violations, notes: this.notes, facts: this.facts, ms: Date.now() - this.started,
    };
  }
}

export const passed = (r: DrillReport) => r.lost === 0 && r.duplicated === 0 && r.violations.length === 0;
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it answers a value (not undefined) or `timeoutMs` passes (then throws `what`). */
export async function until<T>(what: string, timeoutMs: number, check: () => Promise<T | undefined>, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

// ---------------------------------------------------------------------------------------------------
// Processes

export interface DrillChild {
  name: string;
  proc: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The last lines it printed (for error messages). */
  tail(): string;
  /** The last line it printed that contains `text` (e.g. a request id in the api's error log). */
  find(text: string): string | undefined;
  readonly running: boolean;
}

/**
 * The child processes of one drill. Every one is tracked, so that whatever happens (a failed check, an
 * exception) `stopAll` leaves none behind: SIGTERM, then SIGKILL after a grace period.
 */
export class Processes {
  private readonly children: DrillChild[] = [];

  constructor() {
    live.add(this);
  }

  spawn(name: string, file: string, args: string[], env: NodeJS.ProcessEnv): DrillChild {
    const proc = spawn(file, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const lines: string[] = [];
    const keep = (d: Buffer) => {
      lines.push(...String(d).split('\n').filter(Boolean));
      if (lines.length > 5000) lines.splice(0, lines.length - 5000);
    };
    proc.stdout!.on('data', keep);
    proc.stderr!.on('data', keep);
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      proc.on('exit', (code, signal) => resolve({ code, signal }));
      proc.on('error', () => resolve({ code: null, signal: null }));
    });
    const child: DrillChild = {
      name, proc, exited, tail: () => lines.slice(-40).join('\n'), find: (text) => [...lines].reverse().find((l) => l.includes(text)),
      get running() { return proc.exitCode === null && proc.signalCode === null; },
    };
    this.children.push(child);
    return child;
  }

  /** Waits until `line` appears in its output; fails if it exits first. */
  async waitForLine(child: DrillChild, line: RegExp, timeoutMs = 60_000): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      let seen = '';
      const timer = setTimeout(() => reject(new Error(`${child.name} printed no ${line} within ${timeoutMs} ms:\n${child.tail()}`)), timeoutMs);
      const onData = (d: Buffer) => {
        seen += String(d);
        if (line.test(seen)) {
          clearTimeout(timer);
          child.proc.stdout!.off('data', onData);
          resolve();
        }
      };
      child.proc.stdout!.on('data', onData);
      void child.exited.then((e) => {
        clearTimeout(timer);
        reject(new Error(`${child.name} exited (${e.code ?? e.signal}) before it was ready:\n${child.tail()}`));
      });
    });
  }

  async kill(child: DrillChild, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (child.running) child.proc.kill(signal);
    await child.exited;
  }

  /**
   * Stops every child still running (SIGTERM, SIGKILL after `graceMs`), then checks that none is left: a
   * process that needed SIGKILL or survives is a finding.
   */
  async stopAll(f: Findings, graceMs = 15_000): Promise<void> {
    const alive = this.children.filter((c) => c.running);
    for (const c of alive) c.proc.kill('SIGTERM');
    await Promise.all(alive.map(async (c) => {
      const timer = setTimeout(() => {
        f.violation(`${c.name} (pid ${c.proc.pid}) did not stop within ${graceMs} ms of SIGTERM; killed`);
        c.proc.kill('SIGKILL');
      }, graceMs);
      await c.exited;
      clearTimeout(timer);
    }));
    for (const c of this.children) if (pidAlive(c.proc.pid!)) f.violation(`${c.name} (pid ${c.proc.pid}) is still alive after the drill`);
    live.delete(this);
  }

  /** SIGKILL to every child still running, at once (the runner was interrupted). */
  killNow(): void {
    for (const c of this.children) if (c.running) c.proc.kill('SIGKILL');
  }

  get pids(): number[] {
    return this.children.map((c) => c.proc.pid!).filter(Boolean);
  }
}

const live = new Set<Processes>();

/** Kills the children of every drill still running: for an interrupted runner, and any exit of this process. */
export function killDrillProcesses(): void {
  for (const p of live) p.killNow();
}
process.on('exit', killDrillProcesses);

/** Environment of an api or worker process on the stack's database and Temporal (overridable). */
export function processEnv(overrides: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const { config, ds, env } = getStack();
  return childEnv({
    DATABASE_URL: (ds.options as { url: string }).url,
    SECRETS_KEY: config.secretsKey!.toString('base64'),
    TEMPORAL_ADDRESS: env.address,
    TEMPORAL_TASK_QUEUE: config.temporal.taskQueue,
    DATA_DIR: config.dataDir,
    BLOB_DIR: config.blobDir,
    BUILD_DIR: config.buildDir,
    HOST: '127.0.0.1',
    LOG_LEVEL: config.logLevel,
    SHUTDOWN_GRACE_MS: '2000',
    ...overrides,
  });
}

/** A real api process (`npm run api`, dist/src/api/main.js), ready once GET /ready answers 200. */
export async function startApiProcess(procs: Processes, name: string, overrides: Record<string, string | undefined> = {}) {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const child = procs.spawn(name, process.execPath, [path.join(DIST, 'src', 'api', 'main.js')],
    // Errors are logged (kept in memory, not printed) so that a drill can say why a request failed.
    processEnv({ PORT: String(port), PUBLIC_BASE_URL: baseUrl, LOG_LEVEL: 'error', ...overrides }));
  await until(`${name} to answer /ready`, 60_000, async () => {
    if (!child.running) throw new Error(`${name} exited before it was ready:\n${child.tail()}`);
    const res = await fetch(`${baseUrl}/ready`).catch(() => undefined);
    return res?.status === 200 ? true : undefined;
  }, 50);
  /** What the api logged about a request that failed with a 5xx (its body names the request id). */
  const whyFailed = (body: string) => {
    const requestId = body.match(/request id ([0-9a-f-]{36})/)?.[1];
    const line = requestId ? child.find(requestId) : undefined;
    if (!line) return '';
    try {
      const { err } = JSON.parse(line) as { err?: { type?: string; message?: string; stack?: string } };
      return ` (${err?.type}: ${err?.message}; ${err?.stack?.split('\n').slice(1, 4).map((l) => l.trim()).join(' ')})`;
    } catch {
      return ` (${line.slice(0, 300)})`;
    }
  };
  return { child, baseUrl, whyFailed };
}

let bundleFile: string | undefined;

/**
 * A real worker (workflows and activities, see processes/worker.ts) in a process of its own on `taskQueue`,
 * ready once it polls. It loads the stack's prebuilt workflow bundle, so it starts in about a second.
 */
export async function startWorkerProcess(procs: Processes, name: string, overrides: Record<string, string | undefined>) {
  const { workflowBundle, config } = getStack();
  if (!bundleFile) {
    bundleFile = path.join(config.dataDir, 'drill-workflow-bundle.js');
    fs.writeFileSync(bundleFile, workflowBundle.code);
  }
  const child = procs.spawn(name, process.execPath, [path.join(__dirname, 'processes', 'worker.js'), bundleFile], processEnv(overrides));
  await procs.waitForLine(child, /^ready$/m);
  return child;
}

// ---------------------------------------------------------------------------------------------------
// A Temporal dev server of the drill's own, restartable on the same SQLite file and port

export async function startTemporalDevServer(procs: Processes, opts: { dbFile: string; port: number; name?: string }): Promise<DrillChild> {
  const cli = temporalCli(getStack().config);
  if (cli.type !== 'existing-path') throw new Error('the Temporal CLI is not cached: run tools/obtain-temporal.sh --cli-only');
  const child = procs.spawn(opts.name ?? 'temporal', cli.path, [
    'server', 'start-dev', '--ip', '127.0.0.1', '--port', String(opts.port), '--headless',
    '--db-filename', opts.dbFile, '--namespace', 'default', '--log-level', 'error',
    ...SEARCH_ATTRIBUTES.flatMap((k) => ['--search-attribute', `${k.name}=Keyword`]),
  ], childEnv());
  await until('the Temporal dev server to answer', 60_000, async () => {
    if (!child.running) throw new Error(`the Temporal dev server exited:\n${child.tail()}`);
    try {
      const connection = await Connection.connect({ address: `127.0.0.1:${opts.port}`, connectTimeout: 1000 });
      try {
        await connection.workflowService.describeNamespace({ namespace: 'default' });
        return true;
      } finally {
        await connection.close();
      }
    } catch {
      return undefined;
    }
  }, 200);
  return child;
}

// ---------------------------------------------------------------------------------------------------
// Runs: the drill program and the checks that runs came through intact

/**
 * The program every drill runs (python): records each execution of itself in a marker file
 * `$DRILL_MARKS/<run id>.<pid>` (so a second execution of one run is visible), prints `lines` lines and
 * posts `events` USER events (payload {i}) spread over `seconds`, retrying a post refused with 503 or
 * unanswered, like a well-behaved client. Accepted events are noted in the marker file too.
 * argv: lines seconds events.
 */
export const DRILL_PROGRAM = `
import json, os, sys, time, urllib.error, urllib.request
BASE = os.environ["GT_CLOUD_BASE_URL"]
RUN_ID = os.environ["GT_CLOUD_STRUCTURE_RUN_ID"]
KEY = os.environ["GT_CLOUD_API_KEY"]
MARK = os.path.join(os.environ["DRILL_MARKS"], "%s.%d" % (RUN_ID, os.getpid()))
def note(text):
    with open(MARK, "a") as f:
        f.write(text + "\\n")
note("started")
lines, seconds, events = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
def post(i):
    body = json.dumps({"type": "DrillEvent", "timestamp": time.time(), "payload": {"i": i}}).encode()
    deadline = time.time() + 120
    while time.time() < deadline:
        req = urllib.request.Request(BASE + "/api/structure-runs/" + RUN_ID + "/events", data=body, method="POST",
                                     headers={"Authorization": "Bearer " + KEY, "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=20) as r:
                note("event %d %d" % (i, r.status))
                return
        except urllib.error.HTTPError as e:
            if e.code != 503:
                note("event %d %d %s" % (i, e.code, e.read()[:300].decode("utf8", "replace")))
                return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.25)
    note("event %d gave up" % i)
steps = max(lines, events, 1)
for k in range(steps):
    if k < lines:
        print("line %d" % k, flush=True)
    if k < events:
        post(k)
    time.sleep(seconds / steps)
note("finished")
`;

export interface Execution {
  pid: number;
  notes: string[];
}

/** Executions of each run, from the marker files the program wrote. */
export function executionsOf(marksDir: string): Map<string, Execution[]> {
  const out = new Map<string, Execution[]>();
  for (const file of fs.readdirSync(marksDir)) {
    const [runId, pid] = file.split('.');
    const list = out.get(runId) ?? [];
    list.push({ pid: Number(pid), notes: fs.readFileSync(path.join(marksDir, file), 'utf8').split('\n').filter(Boolean) });
    out.set(runId, list);
  }
  return out;
}

/** A fresh directory (readable by the user processes of runs) that `cleanup` removes. */
export function tempDir(label: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `tarmac-drill-${label}-`));
  fs.chmodSync(dir, 0o777);
  return dir;
}

const TERMINAL = ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'];
const FINAL_EVENT: Record<string, string> = {
  SUCCEEDED: 'StructureRunCompleted', FAILED: 'StructureRunCompleted', ERROR: 'StructureRunError', CANCELLED: 'StructureRunCancelled',
};

export interface RunExpectation {
  /** Statuses a run may end in (default: SUCCEEDED). */
  statuses?: string[];
  /** Log lines `line 0..n-1` each run that executed to its end must have, exactly once, in order. */
  lines?: number;
  /** USER events {i: 0..n-1} each run that executed to its end must have, exactly once. */
  events?: number;
}

/**
 * Checks runs after a fault, against the database (`ds`), their workflows (`temporal`) and the marker files:
 * every run exists and is terminal, in an expected status that its workflow's result agrees with; its
 * SYSTEM events are complete and single; its code ran at most once (exactly once when it SUCCEEDED), and
 * every line it printed and every event the api accepted from it is stored once; its credential is gone
 * and its process too.
 */
export async function checkRuns(
  f: Findings,
  opts: {
    ds: DataSource; temporal: Client; runIds: string[]; marksDir: string; expect: RunExpectation;
    /** Says why the api failed a request, from the answer's body (startApiProcess's whyFailed). */
    explain?: (body: string) => string;
  },
): Promise<void> {
  const { ds, runIds, marksDir, expect } = opts;
  const executions = executionsOf(marksDir);
  const rows: Array<{ run_id: string; status: string; started_at: Date | null; completed_at: Date | null; status_detail: any }> = await ds.query(
    `SELECT run_id, status, started_at, completed_at, status_detail FROM runs WHERE run_id = ANY($1::uuid[])`, [runIds]);
  const byId = new Map(rows.map((r) => [r.run_id, r]));
  f.missing(runIds.length - byId.size, 'runs (created with 201, no row)');
  const events: Array<{ run_id: string; seq: string; type: string; origin: string; payload: any }> = await ds.query(
    `SELECT run_id, seq, type, origin, payload FROM run_events WHERE run_id = ANY($1::uuid[]) ORDER BY run_id, seq`, [runIds]);
  const logs: Array<{ run_id: string; line: string }> = await ds.query(
    `SELECT run_id, line FROM run_logs WHERE run_id = ANY($1::uuid[]) ORDER BY run_id, seq`, [runIds]);
  const [{ keys }] = await ds.query(`SELECT count(*)::int AS keys FROM api_keys WHERE run_id = ANY($1::uuid[])`, [runIds]);
  if (keys) f.violation(`${keys} run credentials were not deleted`);

  for (const runId of runIds) {
    const row = byId.get(runId);
    if (!row) continue;
    f.checked++;
    const mine = events.filter((e) => e.run_id === runId);
    const system = mine.filter((e) => e.origin === 'SYSTEM').map((e) => e.type);
    const ran = executions.get(runId) ?? [];
    if (!TERMINAL.includes(row.status)) {
      f.violation(`run ${runId} stayed ${row.status}`);
      f.missing(1, 'terminal statuses');
      continue;
    }
    const allowed = expect.statuses ?? ['SUCCEEDED'];
    if (!allowed.includes(row.status)) f.violation(`run ${runId} ended ${row.status} ${JSON.stringify(row.status_detail)}, expected ${allowed.join('|')}`);

    // The workflow agrees: its result is the status it recorded.
    const result = await opts.temporal.workflow.getHandle(workflowIdOf('structure-run', runId)).result().catch((e: Error) => `failed: ${e.message}`);
    if (result !== row.status) f.violation(`run ${runId} is ${row.status} but its workflow answered ${result}`);

    // SYSTEM events: each once, the right final one, RUNNING's when it ran.
    for (const type of new Set(system)) f.twice(system.filter((t) => t === type).length - 1, `${type} events (run ${runId})`);
    const of = `(run ${runId}, ${row.status}, events ${system.join(',')})`;
    f.missing(system.includes('StructureRunStarting') ? 0 : 1, `StructureRunStarting events ${of}`);
    f.missing(system.includes(FINAL_EVENT[row.status]) ? 0 : 1, `${FINAL_EVENT[row.status]} events ${of}`);
    if (row.started_at) f.missing(system.includes('StructureRunRunning') ? 0 : 1, `StructureRunRunning events ${of}`);
    const seqs = mine.map((e) => Number(e.seq));
    if (seqs.some((s, i) => s !== i + 1)) f.violation(`run ${runId} has event sequence gaps: ${seqs.join(',')}`);

    // Executions: never twice; once when it succeeded.
    f.twice(ran.length - 1, `executions of user code (run ${runId})`);
    if (row.status === 'SUCCEEDED') f.missing(ran.length === 0 ? 1 : 0, `executions (run ${runId} SUCCEEDED but never ran)`);
    for (const e of ran) {
      if (pidAlive(e.pid)) f.violation(`run ${runId}: its process ${e.pid} is still alive`);
    }

    // What a complete execution produced is stored, once each.
    const complete = ran.find((e) => e.notes.includes('finished'));
    if (complete && row.status === 'SUCCEEDED') {
      if (expect.lines) {
        const got = logs.filter((l) => l.run_id === runId).map((l) => l.line);
        const want = Array.from({ length: expect.lines }, (_, i) => `line ${i}`);
        f.missing(want.filter((l) => !got.includes(l)).length, 'log lines');
        f.twice(got.length - new Set(got).size, 'log lines');
        if (got.join('\n') !== want.join('\n') && got.length === want.length) f.violation(`run ${runId}: log lines out of order`);
      }
      if (expect.events) {
        const accepted = complete.notes.filter((n) => / 202$/.test(n)).map((n) => Number(n.split(' ')[1]));
        const refused = complete.notes.filter((n) => n.startsWith('event ') && !/ 202$/.test(n));
        if (refused.length) f.violation(`run ${runId}: events refused or given up: ${refused.map((n) => n + (opts.explain?.(n) ?? '')).join('; ')}`);
        const stored = mine.filter((e) => e.origin === 'USER').map((e) => e.payload?.i as number);
        f.missing(accepted.filter((i) => !stored.includes(i)).length, 'accepted events');
        f.twice(stored.length - new Set(stored).size, 'events');
        f.checked += stored.length;
      }
    }
  }
}

function pidAlive(pid: number): boolean {
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
    .split('\n').filter(Boolean)
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
