// The program every drill runs, and the checks that a set of runs came through a fault intact.
import type { Client } from '@temporalio/client';
import type { DataSource } from 'typeorm';
import { workflowIdOf } from '../../src/temporal/workflow-start';
import { runAlive } from '../harness/runs';
import { Findings } from './kit';
import type { Witness } from './witness';

/**
 * The program every drill runs (python): reports each execution of itself to the drill's witness
 * (`$DRILL_WITNESS`, witness.ts: a second execution of one run is visible), prints `lines` lines and
 * posts `events` USER events (payload {i}) spread over `seconds`, each with an Idempotency-Key, retrying a
 * post refused with 503, unanswered, or answered 502/504 by the load balancer (its api died holding it), like a
 * well-behaved client: the key makes a retry of a post that was stored store nothing. Accepted events are
 * reported to the witness too.
 * argv: lines seconds events.
 */
export const DRILL_PROGRAM = `
import json, os, sys, time, urllib.error, urllib.request
BASE = os.environ["GT_CLOUD_BASE_URL"]
RUN_ID = os.environ["GT_CLOUD_STRUCTURE_RUN_ID"]
KEY = os.environ["GT_CLOUD_API_KEY"]
WITNESS = os.environ["DRILL_WITNESS"]
EXECUTION = os.urandom(8).hex()
def note(text):
    body = json.dumps({"run": RUN_ID, "execution": EXECUTION, "note": text}).encode()
    for attempt in range(50):
        try:
            urllib.request.urlopen(urllib.request.Request(WITNESS, data=body, method="POST"), timeout=5).close()
            return
        except (urllib.error.URLError, OSError):
            time.sleep(0.1)
    raise SystemExit("the drill's witness is unreachable")
note("started")
lines, seconds, events = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
def post(i):
    body = json.dumps({"type": "DrillEvent", "timestamp": time.time(), "payload": {"i": i}}).encode()
    deadline = time.time() + 120
    while time.time() < deadline:
        req = urllib.request.Request(BASE + "/api/structure-runs/" + RUN_ID + "/events", data=body, method="POST",
                                     headers={"Authorization": "Bearer " + KEY, "Content-Type": "application/json",
                                              "Idempotency-Key": "%s-%d" % (EXECUTION, i)})
        try:
            with urllib.request.urlopen(req, timeout=20) as r:
                note("event %d %d" % (i, r.status))
                return
        except urllib.error.HTTPError as e:
            if e.code not in (502, 503, 504):
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

const TERMINAL = ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'];
const FINAL_EVENT: Record<string, string> = {
  SUCCEEDED: 'StructureRunCompleted',
  FAILED: 'StructureRunCompleted',
  ERROR: 'StructureRunError',
  CANCELLED: 'StructureRunCancelled',
};

export interface RunExpectation {
  /** Statuses a run may end in (default: SUCCEEDED). */
  statuses?: string[];
  /** Log lines `line 0..n-1` each run that executed to its end must have, exactly once, in order. */
  lines?: number;
  /** USER events {i: 0..n-1} each run that executed to its end must have, exactly once. */
  events?: number;
  /**
   * A run may say that output was lost (`status_detail.output_lost`, written when the database refused its
   * log lines past the log pump's grace): its missing log lines are then recorded, not lost. Accepted events
   * must be stored regardless.
   */
  lossRecorded?: boolean;
}

/**
 * Checks runs after a fault, against the database (`ds`), their workflows (`temporal`) and the witness:
 * every run exists and is terminal, in an expected status that its workflow's result agrees with; its
 * SYSTEM events are complete and single; its code ran at most once (exactly once when it SUCCEEDED), and
 * every line it printed and every event the api accepted from it is stored once; its credential is gone
 * and its process too.
 */
export async function checkRuns(
  f: Findings,
  opts: {
    ds: DataSource;
    temporal: Client;
    runIds: string[];
    witness: Witness;
    expect: RunExpectation;
    /** Says why the api failed a request, from the answer's body (startApiProcess's whyFailed). */
    explain?: (body: string) => string;
  },
): Promise<void> {
  const { ds, runIds, witness, expect } = opts;
  const rows: Array<{
    run_id: string;
    status: string;
    started_at: Date | null;
    completed_at: Date | null;
    status_detail: any;
  }> = await ds.query(
    `SELECT run_id, status, started_at, completed_at, status_detail FROM runs WHERE run_id = ANY($1::uuid[])`,
    [runIds],
  );
  const byId = new Map(rows.map((r) => [r.run_id, r]));
  f.missing(runIds.length - byId.size, 'runs (created with 201, no row)');
  const events: Array<{ run_id: string; seq: string; type: string; origin: string; payload: any }> = await ds.query(
    `SELECT run_id, seq, type, origin, payload FROM run_events WHERE run_id = ANY($1::uuid[]) ORDER BY run_id, seq`,
    [runIds],
  );
  const logs: Array<{ run_id: string; line: string }> = await ds.query(
    `SELECT run_id, line FROM run_logs WHERE run_id = ANY($1::uuid[]) ORDER BY run_id, seq`,
    [runIds],
  );
  const [{ keys }] = await ds.query(`SELECT count(*)::int AS keys FROM api_keys WHERE run_id = ANY($1::uuid[])`, [
    runIds,
  ]);
  if (keys) f.violation(`${keys} run credentials were not deleted`);

  for (const runId of runIds) {
    const row = byId.get(runId);
    if (!row) continue;
    f.checked++;
    const mine = events.filter((e) => e.run_id === runId);
    const system = mine.filter((e) => e.origin === 'SYSTEM').map((e) => e.type);
    const ran = witness.executionsOf(runId);
    if (!TERMINAL.includes(row.status)) {
      f.violation(`run ${runId} stayed ${row.status}`);
      f.missing(1, 'terminal statuses');
      continue;
    }
    const allowed = expect.statuses ?? ['SUCCEEDED'];
    if (!allowed.includes(row.status))
      f.violation(
        `run ${runId} ended ${row.status} ${JSON.stringify(row.status_detail)}, expected ${allowed.join('|')}`,
      );

    // The workflow agrees: its result is the status it recorded.
    const result = await opts.temporal.workflow
      .getHandle(workflowIdOf('structure-run', runId))
      .result()
      .catch((e: Error) => `failed: ${e.message}`);
    if (result !== row.status) f.violation(`run ${runId} is ${row.status} but its workflow answered ${result}`);

    // SYSTEM events: each once, the right final one, RUNNING's when it ran.
    for (const type of new Set(system))
      f.twice(system.filter((t) => t === type).length - 1, `${type} events (run ${runId})`);
    const of = `(run ${runId}, ${row.status}, events ${system.join(',')})`;
    f.missing(system.includes('StructureRunStarting') ? 0 : 1, `StructureRunStarting events ${of}`);
    f.missing(system.includes(FINAL_EVENT[row.status]) ? 0 : 1, `${FINAL_EVENT[row.status]} events ${of}`);
    if (row.started_at) f.missing(system.includes('StructureRunRunning') ? 0 : 1, `StructureRunRunning events ${of}`);
    const seqs = mine.map((e) => Number(e.seq));
    if (seqs.some((s, i) => s !== i + 1)) f.violation(`run ${runId} has event sequence gaps: ${seqs.join(',')}`);

    // Executions: never twice; once when it succeeded.
    f.twice(ran.length - 1, `executions of user code (run ${runId})`);
    if (row.status === 'SUCCEEDED')
      f.missing(ran.length === 0 ? 1 : 0, `executions (run ${runId} SUCCEEDED but never ran)`);
    if (runAlive(runId)) f.violation(`run ${runId}: a process of it is still alive`);

    // What a complete execution produced is stored, once each.
    const complete = ran.find((e) => e.notes.includes('finished'));
    if (complete && row.status === 'SUCCEEDED') {
      if (expect.lines) {
        const got = logs.filter((l) => l.run_id === runId).map((l) => l.line);
        const want = Array.from({ length: expect.lines }, (_, i) => `line ${i}`);
        const missing = want.filter((l) => !got.includes(l)).length;
        if (missing && expect.lossRecorded && row.status_detail?.output_lost)
          f.count('logLinesLostAndRecorded', missing);
        else f.missing(missing, `log lines (run ${runId})`);
        f.twice(got.length - new Set(got).size, 'log lines');
        if (got.join('\n') !== want.join('\n') && got.length === want.length)
          f.violation(`run ${runId}: log lines out of order`);
      }
      if (expect.events) {
        const accepted = complete.notes.filter((n) => / 202$/.test(n)).map((n) => Number(n.split(' ')[1]));
        const refused = complete.notes.filter((n) => n.startsWith('event ') && !/ 202$/.test(n));
        if (refused.length)
          f.violation(
            `run ${runId}: events refused or given up: ${refused.map((n) => n + (opts.explain?.(n) ?? '')).join('; ')}`,
          );
        const stored = mine.filter((e) => e.origin === 'USER').map((e) => e.payload?.i as number);
        f.missing(accepted.filter((i) => !stored.includes(i)).length, 'accepted events');
        f.twice(stored.length - new Set(stored).size, 'events');
        f.checked += stored.length;
      }
    }
  }
}
