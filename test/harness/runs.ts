// Helpers for run tests: wait for a run through the api, and python programs used as structures.
import { readdirSync, readFileSync } from 'node:fs';
import { expect } from 'chai';
import { as } from './client';
import { newRunRow, type Run } from '../../src/persistence/entities/run';
import { randomUUID } from 'node:crypto';

export const TERMINAL = ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'];

/** Polls GET /api/structure-runs/{id} until `done` holds (default: terminal). */
export function waitForRun(
  key: string,
  runId: string,
  done = (r: any) => TERMINAL.includes(r.status),
  timeoutMs = 30_000,
  baseUrl?: string,
) {
  return waitForRecord(key, `/api/structure-runs/${runId}`, done, timeoutMs, baseUrl);
}

/** The assistant run once `done` (default: it ended), read through its own route. */
export const waitForAssistantRun = (
  key: string,
  runId: string,
  done = (r: any) => TERMINAL.includes(r.status),
  timeoutMs = 60_000,
) => waitForRecord(key, `/api/assistant-runs/${runId}`, done, timeoutMs);

async function waitForRecord(
  key: string,
  route: string,
  done: (r: any) => boolean,
  timeoutMs: number,
  baseUrl?: string,
) {
  const runId = route.split('/').pop();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await as(key, baseUrl).get(route);
    expect(res.status, res.text).to.equal(200);
    if (done(res.body)) return res.body;
    if (Date.now() > deadline) throw new Error(`run ${runId} still ${res.body.status} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Python helpers every fixture program starts with: `call(method, path, body)` with the run's credential. */
export const PY_PRELUDE = `
import json, os, sys, time, urllib.request, urllib.error
BASE = os.environ["GT_CLOUD_BASE_URL"]
RUN_ID = os.environ["GT_CLOUD_STRUCTURE_RUN_ID"]
KEY = os.environ.get("GT_CLOUD_API_KEY")
def call(method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(BASE + "/" + path, data=data, method=method,
                                 headers={"Authorization": "Bearer " + KEY, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
`;

/** A python tool (tool.py) with one activity, `divide` ({a, b}), documented by its docstring. */
export const CALCULATOR_TOOL = `
class Calculator:
    name = "Calculator"

    def divide(self, params):
        """Divides a by b."""
        return params["a"] / params["b"]


def init_tool():
    return Calculator()
`;

/** Prints its args, some env, lines on both streams; posts its output; exits with EXIT_CODE (default 0). */
export const ECHO_PROGRAM = `${PY_PRELUDE}
print("args " + json.dumps(sys.argv[1:]))
# Two pipes: lines written within the same instant may be read in either order, a few ms apart they are not.
time.sleep(0.05)
print("to stderr", file=sys.stderr)
time.sleep(0.05)
print("back to stdout")
names = ["DATABASE_URL", "SECRETS_KEY", "TEMPORAL_ADDRESS", "FROM_STRUCTURE", "FROM_SECRET", "FROM_RUN", "HOME", "LANG", "GT_CLOUD_BUCKET_ID"]
print("env " + json.dumps({n: os.environ.get(n) for n in names}))
print("env names " + json.dumps(sorted(os.environ.keys())))
finish = {"type": "FinishStructureRunEvent", "timestamp": 1700000000.5,
          "payload": {"output_task_output": {"type": "TextArtifact", "value": "hello " + " ".join(sys.argv[1:])}}}
print("posted %d" % call("POST", "api/structure-runs/" + RUN_ID + "/events", [finish]))
print("own run %d" % call("GET", "api/structure-runs/" + RUN_ID))
print("secrets %d" % call("GET", "api/secrets"))
print("structures %d" % call("GET", "api/structures"))
other = os.environ.get("OTHER_RUN")
if other:
    print("other run %d" % call("GET", "api/structure-runs/" + other))
sys.exit(int(os.environ.get("EXIT_CODE", "0")))
`;

/** Prints its pid, then sleeps (until stopped). */
export const SLEEP_PROGRAM = `
import os, sys, time
print("pid %d" % os.getpid(), flush=True)
time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 600)
print("woke up")
`;

/** Posts `n` events `gap` seconds apart (args: n gap), then exits. */
export const EVENTS_PROGRAM = `${PY_PRELUDE}
n, gap = int(sys.argv[1]), float(sys.argv[2])
for i in range(n):
    status = call("POST", "api/structure-runs/" + RUN_ID + "/events", {"type": "Tick", "timestamp": time.time(), "payload": {"i": i}})
    assert status == 202, status
    time.sleep(gap)
`;

/** True while a process with this pid exists and is not a zombie (an orphan may wait a while to be reaped). */
/**
 * Whether any process of the run still runs on this host, found by the run id in its environment: a
 * sandboxed program's own pid (what it prints) is a pid of its namespace, not of the host.
 */
export function runAlive(runId: string): boolean {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (!readFileSync(`/proc/${entry}/environ`, 'latin1').split('\0').includes(`GT_CLOUD_STRUCTURE_RUN_ID=${runId}`))
        continue;
      if (processAlive(Number(entry))) return true;
    } catch {
      // gone, or not ours to read
    }
  }
  return false;
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/State:\s+Z/.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}

/** A run row for tests that write one directly: newRunRow's QUEUED defaults, with `fields` over them. */
export function aRun(fields: Partial<Run> & Pick<Run, 'kind' | 'organization_id'>, now = new Date()): Run {
  return { ...newRunRow({ run_id: randomUUID(), created_by: 'test', ...fields }, now), ...fields };
}
