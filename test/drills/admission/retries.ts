// Runs with `retry_policy: {max_attempts: 3}` in flight on a worker killed with SIGKILL end SUCCEEDED on a later
// attempt (docs/run-control.md#retries-of-lost-runs): each attempt is recorded on the run, and the drill's witness
// (outside the platform) sees the code started at most once per attempt. The program sleeps on its first attempt
// (TARMAC_RUN_ATTEMPT=1), so only a retry can end it.
import { randomUUID } from 'node:crypto';
import { structureWithBuild } from '../../harness/builds';
import { as } from '../../harness/client';
import { newTenant } from '../../harness/stack';
import { Findings, sleep, until } from '../kit';
import { Processes, startApiProcess, startWorkerProcess } from '../processes';
import { Witness } from '../witness';
import type { AdmissionCheck } from './kit';

const PROGRAM = `
import json, os, time, urllib.error, urllib.request
RUN_ID = os.environ["GT_CLOUD_STRUCTURE_RUN_ID"]
WITNESS = os.environ["DRILL_WITNESS"]
ATTEMPT = os.environ["TARMAC_RUN_ATTEMPT"]
EXECUTION = os.urandom(8).hex()
def note(text):
    body = json.dumps({"run": RUN_ID, "execution": EXECUTION, "note": text}).encode()
    for _ in range(50):
        try:
            urllib.request.urlopen(urllib.request.Request(WITNESS, data=body, method="POST"), timeout=5).close()
            return
        except (urllib.error.URLError, OSError):
            time.sleep(0.1)
    raise SystemExit("the drill's witness is unreachable")
note("started " + ATTEMPT)
if ATTEMPT == "1":
    time.sleep(600)
print("attempt " + ATTEMPT, flush=True)
note("finished " + ATTEMPT)
`;

const POLICY = { max_attempts: 3, initial_interval: 1, backoff: 2, max_interval: 4, on: ['WorkerLost'] };

export const checks: AdmissionCheck[] = [
  {
    name: 'retries',
    promise:
      'max_attempts 3: runs on a SIGKILLed worker end SUCCEEDED on a later attempt, code started once per attempt',
    async run({ stack, quick, note }) {
      const inFlight = quick ? 3 : 20;
      const f = new Findings('retries', 'worker SIGKILL');
      const queue = `drill-retries-${randomUUID().slice(0, 8)}`;
      const witness = await Witness.start();
      const procs = new Processes();
      try {
        // 2 s until a silent worker is presumed lost (snapshotted into each run's workflow by the api).
        const api = await startApiProcess(procs, 'api', {
          TEMPORAL_TASK_QUEUE: queue,
          RUN_HEARTBEAT_TIMEOUT_SECONDS: '2',
        });
        const workerEnv = {
          TEMPORAL_TASK_QUEUE: queue,
          RUN_API_BASE_URL: api.baseUrl,
          ORG_MAX_CONCURRENT_RUNS: String(inFlight),
        };
        const victim = await startWorkerProcess(procs, 'worker-1', workerEnv);
        const t = await newTenant('drill-retries');
        const s = await structureWithBuild(t.organizationId, { files: { 'structure.py': PROGRAM } });
        const client = as(t.key, api.baseUrl);
        const runIds = await Promise.all(
          Array.from({ length: inFlight }, async () => {
            const res = await client.post(`/api/structures/${s.structureId}/runs`, {
              args: [],
              env_vars: [{ name: 'DRILL_WITNESS', value: witness.url }],
              retry_policy: POLICY,
            });
            if (res.status !== 201) throw new Error(`creating a run answered ${res.status} ${res.text}`);
            return res.body.structure_run_id as string;
          }),
        );
        const started = (runId: string, attempt: number) =>
          witness.executionsOf(runId).filter((e) => e.notes.includes(`started ${attempt}`)).length;
        await until('every run to be started on its first attempt', 120_000, async () =>
          runIds.every((id) => started(id, 1) === 1) ? true : undefined,
        );
        await sleep(500);
        await procs.kill(victim, 'SIGKILL');
        f.faults++;
        const killedAt = Date.now();
        await startWorkerProcess(procs, 'worker-2', workerEnv);

        const rowsOf = () =>
          stack.ds.query(
            `SELECT run_id, status, attempt, attempts, status_detail FROM runs WHERE run_id = ANY($1::uuid[])`,
            [runIds],
          ) as Promise<
            Array<{
              run_id: string;
              status: string;
              attempt: number;
              attempts: Array<{ attempt: number; reason: string }>;
              status_detail: unknown;
            }>
          >;
        const rows = await until(
          'every run to end after the kill',
          120_000,
          async () => {
            const now = await rowsOf();
            return now.every((r) => ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(r.status)) ? now : undefined;
          },
          250,
        );
        note(`all ${inFlight} runs ended ${((Date.now() - killedAt) / 1000).toFixed(1)} s after the kill`);

        const problems: string[] = [];
        let retried = 0;
        for (const r of rows) {
          if (r.status !== 'SUCCEEDED') problems.push(`${r.run_id} ${r.status} ${JSON.stringify(r.status_detail)}`);
          if (r.attempt < 2) problems.push(`${r.run_id} ended on attempt ${r.attempt}`);
          const recorded = r.attempts.map((a) => `${a.attempt}:${a.reason}`);
          const expected = Array.from({ length: r.attempt - 1 }, (_, i) => `${i + 1}:WorkerLost`);
          if (recorded.join() !== expected.join())
            problems.push(`${r.run_id} attempts ${recorded.join()}, expected ${expected.join()}`);
          for (let a = 1; a <= r.attempt; a++) {
            if (started(r.run_id, a) > 1)
              problems.push(`${r.run_id} attempt ${a} started ${started(r.run_id, a)} times`);
          }
          const finished = witness.executionsOf(r.run_id).filter((e) => e.notes.some((n) => n.startsWith('finished')));
          if (finished.length !== 1) problems.push(`${r.run_id} finished ${finished.length} times`);
          const [{ n }] = await stack.ds.query(
            `SELECT count(*)::int AS n FROM run_events WHERE run_id = $1 AND type = 'RunRetrying'`,
            [r.run_id],
          );
          if (n !== r.attempt - 1) problems.push(`${r.run_id} ${n} RunRetrying events for attempt ${r.attempt}`);
          if (r.attempt > 1) retried++;
        }
        const executions = rows.reduce((sum, r) => sum + witness.executionsOf(r.run_id).length, 0);
        return {
          held: problems.length === 0,
          faults: f.faults,
          result:
            `${inFlight} runs on a killed worker: ${rows.filter((r) => r.status === 'SUCCEEDED').length} SUCCEEDED, ` +
            `${retried} on a later attempt, ${executions} executions of the code` +
            (problems.length ? `; ${problems.slice(0, 5).join('; ')}` : ''),
        };
      } finally {
        await procs.stopAll(f);
        await witness.close();
      }
    },
  },
];
