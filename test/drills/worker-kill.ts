// Drill: SIGKILL the worker (workflows and activities in one process) while runs are in flight, then start
// a new one. Runs that had finished stay as they were; runs whose process was running end ERROR
// (WorkerLost: their code is not run a second time); runs created while no worker ran start on the new
// one and succeed. None stays non-terminal, none runs twice, every status agrees with its workflow.
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { DataSource } from 'typeorm';
import { workflowIdOf } from '../../src/temporal/workflow-start';
import { structureWithBuild } from '../support/builds';
import { as } from '../support/client';
import { getStack, newTenant } from '../support/stack';
import { DrillReport, Findings, sleep, until } from './kit';
import { Processes, startApiProcess, startWorkerProcess } from './processes';
import { Witness } from './witness';
import { checkRuns, DRILL_PROGRAM } from './run-checks';

/** What the run that ended last went through after the kill, from its workflow history: where recovery waits. */
async function afterTheKill(client: Client, ds: DataSource, runIds: string[], killedAt: number): Promise<string> {
  const [last] = await ds.query(
    `SELECT run_id FROM runs WHERE run_id = ANY($1::uuid[]) ORDER BY completed_at DESC LIMIT 1`,
    [runIds],
  );
  if (!last) return 'no run ended';
  const history = await client.workflow.getHandle(workflowIdOf('structure-run', last.run_id)).fetchHistory();
  const steps = (history.events ?? [])
    .map((e) => ({
      at: Number(String(e.eventTime?.seconds ?? 0)) * 1000 + Math.floor((e.eventTime?.nanos ?? 0) / 1e6),
      // The one `<type>EventAttributes` member an event carries names its type.
      type:
        Object.keys(e)
          .find((k) => k.endsWith('EventAttributes') && (e as Record<string, unknown>)[k])
          ?.replace('EventAttributes', '') ?? '?',
    }))
    .filter((e) => e.at >= killedAt);
  return `the last run's workflow after the kill: ${steps.map((e) => `+${((e.at - killedAt) / 1000).toFixed(1)} s ${e.type}`).join(', ')}`;
}

export interface WorkerKillOptions {
  /** Runs in flight (their process running) when the worker is killed. */
  inFlight: number;
  /** Runs that finished before the kill, and runs created while no worker runs. */
  before: number;
  during: number;
}

export async function workerKillDrill(
  opts: WorkerKillOptions = { inFlight: 50, before: 5, during: 10 },
): Promise<DrillReport> {
  const f = new Findings('worker-kill', `SIGKILL of the worker with ${opts.inFlight} runs in flight; a new worker`);
  const { ds, env } = getStack();
  const queue = `drill-worker-kill-${randomUUID().slice(0, 8)}`;
  const witness = await Witness.start();
  const procs = new Processes();
  try {
    // The api snapshots the heartbeat timeout into each run's workflow: 2 s until a silent worker is presumed lost.
    const api = await startApiProcess(procs, 'api', { TEMPORAL_TASK_QUEUE: queue, RUN_HEARTBEAT_TIMEOUT_SECONDS: '2' });
    // Every run in flight is of one organization: its share must not hold any of them back.
    const workerEnv = {
      TEMPORAL_TASK_QUEUE: queue,
      RUN_API_BASE_URL: api.baseUrl,
      ORG_MAX_CONCURRENT_RUNS: String(opts.inFlight + opts.before + opts.during),
    };
    const victim = await startWorkerProcess(procs, 'worker-1', workerEnv);
    const t = await newTenant('drill-worker-kill');
    const s = await structureWithBuild(t.organizationId, { files: { 'structure.py': DRILL_PROGRAM } });
    const client = as(t.key, api.baseUrl);
    const create = async (args: string[]) => {
      const res = await client.post(`/api/structures/${s.structureId}/runs`, {
        args,
        env_vars: [{ name: 'DRILL_WITNESS', value: witness.url }],
      });
      if (res.status !== 201) throw new Error(`creating a run answered ${res.status} ${res.text}`);
      return res.body.structure_run_id as string;
    };
    const statuses = async (ids: string[]) => {
      const rows: Array<{ status: string }> = await ds.query(`SELECT status FROM runs WHERE run_id = ANY($1::uuid[])`, [
        ids,
      ]);
      return rows.map((r) => r.status);
    };

    // Runs that end before the fault: 3 lines over 0.3 s.
    const before = await Promise.all(Array.from({ length: opts.before }, () => create(['3', '0.3', '0'])));
    await until('the first runs to end', 30_000, async () =>
      (await statuses(before)).every((x) => x === 'SUCCEEDED') ? true : undefined,
    );
    // Runs in flight: a line, then ten minutes of sleep. The kill comes once every one of them is RUNNING.
    const inFlight = await Promise.all(Array.from({ length: opts.inFlight }, () => create(['1', '600', '0'])));
    // (A run that ended instead is a finding for the checks below.)
    await until('every run in flight to be RUNNING', 120_000, async () =>
      (await statuses(inFlight)).every((x) => !['QUEUED', 'STARTING'].includes(x)) ? true : undefined,
    ).catch(async (err: Error) => {
      throw new Error(`${err.message}: ${(await statuses(inFlight)).sort().join(',')}`);
    });
    await sleep(500);

    await procs.kill(victim, 'SIGKILL');
    f.faults++;
    const killedAt = Date.now();
    // Created while no worker runs: they wait QUEUED.
    const during = await Promise.all(Array.from({ length: opts.during }, () => create(['3', '0.3', '0'])));
    const queued = await statuses(during);
    if (queued.some((x) => x !== 'QUEUED'))
      f.violation(`runs created without a worker are ${queued.join(',')}, expected QUEUED`);

    await startWorkerProcess(procs, 'worker-2', workerEnv);
    const all = [...before, ...inFlight, ...during];
    await until(
      'every run to end after the restart',
      120_000,
      async () => {
        const now = await statuses(all);
        return now.length === all.length && now.every((x) => ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(x))
          ? true
          : undefined;
      },
      250,
    ).catch((err: Error) => f.violation(err.message));
    f.notes.push(`all ${all.length} runs ended ${((Date.now() - killedAt) / 1000).toFixed(1)} s after the kill`);
    f.notes.push(await afterTheKill(env.client, ds, inFlight, killedAt));

    await checkRuns(f, { ds, temporal: env.client, runIds: [...before, ...during], witness, expect: { lines: 3 } });
    await checkRuns(f, { ds, temporal: env.client, runIds: inFlight, witness, expect: { statuses: ['ERROR'] } });
    const lost: Array<{ n: number }> = await ds.query(
      `SELECT count(*)::int AS n FROM runs WHERE run_id = ANY($1::uuid[]) AND status_detail->>'reason' = 'WorkerLost'`,
      [inFlight],
    );
    f.count('workerLost', lost[0].n);
    if (lost[0].n !== inFlight.length) {
      // Say how the others ended, with their last lines, so that a rare failure explains itself.
      const others: Array<{ status: string; detail: unknown; lines: string | null }> = await ds.query(
        `SELECT status, status_detail AS detail,
                (SELECT string_agg(stream || ': ' || line, ' | ' ORDER BY seq)
                   FROM (SELECT * FROM run_logs l WHERE l.run_id = r.run_id ORDER BY seq DESC LIMIT 5) last) AS lines
           FROM runs r
          WHERE run_id = ANY($1::uuid[]) AND status_detail->>'reason' IS DISTINCT FROM 'WorkerLost'`,
        [inFlight],
      );
      const how = others.map((o) => `${o.status} ${JSON.stringify(o.detail)} ${o.lines ?? '(no log)'}`).join('; ');
      f.violation(`${inFlight.length - lost[0].n} runs in flight did not end WorkerLost: ${how}`);
    }
    const [{ rows }] = await ds.query(`SELECT count(*)::int AS rows FROM runs WHERE resource_id = $1`, [s.structureId]);
    f.twice(rows - all.length, 'run rows');
    f.count('runs', all.length);
  } finally {
    await procs.stopAll(f);
    await witness.close();
  }
  return f.report();
}
