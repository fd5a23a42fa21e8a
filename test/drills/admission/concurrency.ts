// A structure with `concurrency: {limit: 3}` receiving a burst of runs across several keys never has more than 3
// executing per key, as seen from inside the runs: each execution of the program tells the drill's witness when it
// starts and finishes (witness.ts, the witness's own clock), including across a SIGKILL of the worker midway. No
// queued run is lost: every run ends. Its own api and worker processes, on a task queue of their own.
import { randomUUID } from 'node:crypto';
import { structureWithBuild } from '../../harness/builds';
import { as } from '../../harness/client';
import { newTenant } from '../../harness/stack';
import { Findings, sleep, until } from '../kit';
import { Processes, startApiProcess, startWorkerProcess } from '../processes';
import { DRILL_PROGRAM } from '../run-checks';
import { Witness } from '../witness';
import type { AdmissionCheck } from './kit';

const LIMIT = 3;
const TERMINAL = ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'];

/** The most intervals [start, end) open at one instant. */
export function peakOverlap(intervals: Array<{ start: number; end: number }>): number {
  const edges = intervals.flatMap((i) => [
    { at: i.start, d: 1 },
    { at: i.end, d: -1 },
  ]);
  // An end and a start at the same instant do not overlap: ends first.
  edges.sort((a, b) => a.at - b.at || a.d - b.d);
  let open = 0;
  let peak = 0;
  for (const e of edges) peak = Math.max(peak, (open += e.d));
  return peak;
}

export const checks: AdmissionCheck[] = [
  {
    name: 'concurrency',
    promise: `limit ${LIMIT} per concurrency key, seen from inside the runs, across a worker SIGKILL; no queued run lost`,
    async run({ stack, quick, note }) {
      const runs = quick ? 30 : 200;
      const keys = quick ? 3 : 10;
      const seconds = quick ? 0.6 : 0.4;
      const queue = `drill-concurrency-${randomUUID().slice(0, 8)}`;
      const witness = await Witness.start();
      const procs = new Processes();
      const findings = new Findings('concurrency', 'processes of the concurrency check');
      try {
        const api = await startApiProcess(procs, 'api', {
          TEMPORAL_TASK_QUEUE: queue,
          RUN_HEARTBEAT_TIMEOUT_SECONDS: '2',
        });
        // The organization's share is not what holds runs back here: the keys' limit is.
        const workerEnv = { TEMPORAL_TASK_QUEUE: queue, RUN_API_BASE_URL: api.baseUrl, ORG_MAX_CONCURRENT_RUNS: '100' };
        const victim = await startWorkerProcess(procs, 'worker-1', workerEnv);
        const t = await newTenant('drill-concurrency');
        const s = await structureWithBuild(t.organizationId, { files: { 'structure.py': DRILL_PROGRAM } });
        const client = as(t.key, api.baseUrl);
        const patched = await client.patch(`/api/structures/${s.structureId}`, { concurrency: { limit: LIMIT } });
        if (patched.status !== 200) throw new Error(`declaring the limit answered ${patched.status} ${patched.text}`);

        const keyOf = (i: number) => `customer-${i % keys}`;
        const created = await Promise.all(
          Array.from({ length: runs }, async (_, i) => {
            const res = await client.post(`/api/structures/${s.structureId}/runs`, {
              args: ['1', String(seconds), '0'],
              env_vars: [{ name: 'DRILL_WITNESS', value: witness.url }],
              concurrency_key: keyOf(i),
            });
            if (res.status !== 201) throw new Error(`creating a run answered ${res.status} ${res.text}`);
            return { runId: res.body.structure_run_id as string, key: keyOf(i) };
          }),
        );
        const ids = created.map((c) => c.runId);
        const rowsOf = async () =>
          (await stack.ds.query(`SELECT run_id, status, completed_at FROM runs WHERE run_id = ANY($1::uuid[])`, [
            ids,
          ])) as Array<{ run_id: string; status: string; completed_at: Date | null }>;
        const ended = async () => (await rowsOf()).filter((r) => TERMINAL.includes(r.status)).length;

        // The kill comes with a third of the runs ended, others running and the rest queued.
        await until('a third of the runs to end', 180_000, async () =>
          (await ended()) >= runs / 3 ? true : undefined,
        );
        await procs.kill(victim, 'SIGKILL');
        const killedAt = Date.now();
        await sleep(1000);
        await startWorkerProcess(procs, 'worker-2', workerEnv);
        const lost = await until(
          'every run to end',
          quick ? 180_000 : 480_000,
          async () => ((await ended()) === runs ? 0 : undefined),
          250,
        ).catch(async () => runs - (await ended()));

        // Each execution from its start to its finish (or, killed with the worker, to its run's end).
        const rows = new Map((await rowsOf()).map((r) => [r.run_id, r]));
        const perKey = new Map<string, Array<{ start: number; end: number }>>();
        let executions = 0;
        for (const { runId, key } of created) {
          const notes = witness.notesOf(runId);
          for (const start of notes.filter((n) => n.note === 'started')) {
            executions++;
            const finish = notes.find((n) => n.execution === start.execution && n.note === 'finished');
            const end = finish?.at ?? rows.get(runId)?.completed_at?.getTime() ?? Date.now();
            perKey.set(key, [...(perKey.get(key) ?? []), { start: start.at, end }]);
          }
        }
        const peaks = [...perKey.values()].map(peakOverlap);
        const peak = Math.max(0, ...peaks);
        const statuses = new Map<string, number>();
        for (const r of rows.values()) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        const byStatus = [...statuses.entries()].map(([st, n]) => `${n} ${st}`).join(', ');
        note(`${runs} runs over ${keys} keys; killed at ${Math.round(killedAt / 1000) % 1000}; ended: ${byStatus}`);
        note(`peak executing per key: ${peaks.join(',')}`);
        return {
          held: peak <= LIMIT && peak > 0 && lost === 0,
          faults: 1,
          result:
            `${runs} runs across ${keys} keys (limit ${LIMIT}), worker SIGKILL midway: at most ${peak} executing per ` +
            `key seen from inside (${executions} executions), ${lost} runs not ended; ${byStatus}`,
        };
      } finally {
        await procs.stopAll(findings);
        await witness.close();
      }
    },
  },
];
