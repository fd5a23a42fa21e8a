// Drill: restart the Temporal server (a dev server of the drill's own, on its SQLite file) while runs are
// RUNNING. The worker keeps the user processes; api and worker reconnect by themselves; every run finishes.
// While Temporal is down, creating a run answers 503 and leaves no row; reading runs still works (PostgreSQL), and
// so does reading a schedule (its next fire times null: unknown).
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { workflowIdOf } from '../../src/temporal/workflow-start';
import { structureWithBuild } from '../harness/builds';
import { as } from '../harness/client';
import { freePort, getStack, newTenant } from '../harness/stack';
import { DrillReport, Findings, sleep, tempDir, until } from './kit';
import { Processes, startApiProcess, startTemporalDevServer, startWorkerProcess } from './processes';
import { Witness } from './witness';
import { checkRuns, DRILL_PROGRAM } from './run-checks';

/** When the run's process activity last heartbeated (ms), or undefined when it has none pending (ended). */
async function lastHeartbeat(client: Client, runId: string): Promise<number | undefined> {
  const { raw } = await client.workflow.getHandle(workflowIdOf('structure-run', runId)).describe();
  const pending = (raw.pendingActivities ?? []).find((a) => a.activityType?.name === 'executeStructureRun');
  if (!pending) return undefined;
  const t = pending.lastHeartbeatTime;
  return t ? Number(String(t.seconds ?? 0)) * 1000 + Math.floor((t.nanos ?? 0) / 1e6) : 0; // seconds may be a Long
}

export interface TemporalRestartOptions {
  runs: number;
  /** How long each run's program works (the restart happens within it). */
  seconds: number;
  /** How long the server stays down. */
  downMs: number;
  /** One stop per signal, one after the other: SIGTERM (a restart), SIGKILL (a crash). */
  signals: NodeJS.Signals[];
}

export async function temporalRestartDrill(
  opts: TemporalRestartOptions = { runs: 20, seconds: 45, downMs: 12_000, signals: ['SIGTERM', 'SIGKILL'] },
): Promise<DrillReport> {
  const f = new Findings(
    'temporal-restart',
    `Temporal dev server stopped (${opts.signals.join(', later ')}) and restarted on its SQLite file during runs`,
  );
  const { ds } = getStack();
  const dir = tempDir('temporal');
  const witness = await Witness.start();
  const procs = new Processes();
  let connection: Connection | undefined;
  try {
    const server = { dbFile: path.join(dir, 'temporal.sqlite'), port: await freePort() };
    let temporal = await startTemporalDevServer(procs, { ...server, name: 'temporal-1' });
    const address = `127.0.0.1:${server.port}`;
    const api = await startApiProcess(procs, 'api', { TEMPORAL_ADDRESS: address });
    await startWorkerProcess(procs, 'worker', { TEMPORAL_ADDRESS: address, RUN_API_BASE_URL: api.baseUrl });
    connection = await Connection.connect({ address });
    const client = new Client({ connection });

    const t = await newTenant('drill-temporal');
    const s = await structureWithBuild(t.organizationId, { files: { 'structure.py': DRILL_PROGRAM } });
    const http = as(t.key, api.baseUrl);
    const body = (seconds: number) => ({
      args: ['10', String(seconds), '5'],
      env_vars: [{ name: 'DRILL_WITNESS', value: witness.url }],
    });
    const runIds: string[] = [];
    for (let i = 0; i < opts.runs; i++) {
      const res = await http.post(`/api/structures/${s.structureId}/runs`, body(opts.seconds));
      if (res.status !== 201) throw new Error(`creating a run answered ${res.status} ${res.text}`);
      runIds.push(res.body.structure_run_id);
    }
    const statuses = async () =>
      (await ds.query(`SELECT status FROM runs WHERE run_id = ANY($1::uuid[])`, [runIds])).map(
        (r: any) => r.status as string,
      );
    await until('every run to be RUNNING', 120_000, async () =>
      (await statuses()).every((x: string) => !['QUEUED', 'STARTING'].includes(x)) ? true : undefined,
    );

    // A schedule's row is read from PostgreSQL: while Temporal is down it answers 200 with its fire times unknown.
    const schedule = await http.post(`/api/structures/${s.structureId}/schedules`, {
      schedule_expression: 'cron(0 3 * * ? *)',
    });
    if (schedule.status !== 201) throw new Error(`creating a schedule answered ${schedule.status} ${schedule.text}`);
    const scheduleUrl = `/api/structures/${s.structureId}/schedules/${schedule.body.schedule_id}`;

    const downAt = Date.now();
    let refused = 0;
    for (const [i, signal] of opts.signals.entries()) {
      await procs.kill(temporal, signal);
      f.faults++;
      const stoppedAt = Date.now();
      // Side by side with the outage, so as not to lengthen it: each creation waits out the api's 5 s deadline.
      const scheduleReading = http.get(scheduleUrl);
      // Meanwhile: a new run cannot start (503, no row left behind); existing runs can still be read.
      let down = true;
      const probing = (async () => {
        while (down) {
          const created = await http.post(`/api/structures/${s.structureId}/runs`, body(0.2));
          f.checked++;
          if (created.status === 503 && created.body.type === 'ServiceUnavailableError') refused++;
          else if (created.status === 201) runIds.push(created.body.structure_run_id);
          else f.violation(`creating a run without Temporal answered ${created.status} ${created.text.slice(0, 200)}`);
          const read = await http.get(`/api/structure-runs/${runIds[0]}`);
          f.checked++;
          if (read.status !== 200) f.violation(`reading a run without Temporal answered ${read.status}`);
          await sleep(200);
        }
      })();
      await sleep(opts.downMs);
      const scheduleRead = await scheduleReading;
      f.checked++;
      if (scheduleRead.status !== 200 || scheduleRead.body.next_fire_times !== null)
        f.violation(
          `reading a schedule without Temporal answered ${scheduleRead.status} ${scheduleRead.text.slice(0, 200)}`,
        );
      temporal = await startTemporalDevServer(procs, { ...server, name: `temporal-${i + 2}` });
      const restartedAt = Date.now();
      down = false;
      await probing;
      f.notes.push(`${signal}: Temporal was down ${((restartedAt - stoppedAt) / 1000).toFixed(1)} s`);
      // After the restart the api starts runs again, the worker runs them, and the runs in flight heartbeat
      // again, by themselves. (The next stop waits for this: two outages back to back would add up past the
      // runs' heartbeat timeout, and the server would rightly presume their worker lost.)
      await until(
        'the runs in flight to heartbeat again',
        60_000,
        async () => {
          const beats = await Promise.all(runIds.map((id) => lastHeartbeat(client, id)));
          return beats.every((at) => at === undefined || at > restartedAt) ? true : undefined;
        },
        250,
      );
      const again = await until(
        'the api to start runs again',
        60_000,
        async () => {
          const res = await http.post(`/api/structures/${s.structureId}/runs`, body(0.5));
          return res.status === 201 ? (res.body.structure_run_id as string) : undefined;
        },
        500,
      );
      runIds.push(again);
      await until('a run started after the restart to be RUNNING', 60_000, async () =>
        (await ds.query(`SELECT status FROM runs WHERE run_id = $1`, [again]))[0]?.status !== 'QUEUED'
          ? true
          : undefined,
      );
      f.notes.push(
        `${signal}: runs in flight heartbeat, and new runs start, ${((Date.now() - restartedAt) / 1000).toFixed(1)} s after the restart`,
      );
    }
    f.count('refusedWhileDown', refused);
    f.notes.push(`${refused} run creations answered 503 while Temporal was down`);
    await until(
      'every run to end',
      180_000,
      async () =>
        (await statuses()).every((x: string) => ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(x))
          ? true
          : undefined,
      250,
    ).catch((err: Error) => f.violation(err.message));
    f.notes.push(`all ${runIds.length} runs ended ${((Date.now() - downAt) / 1000).toFixed(1)} s after the first stop`);

    const [{ rows }] = await ds.query(`SELECT count(*)::int AS rows FROM runs WHERE resource_id = $1`, [s.structureId]);
    f.twice(rows - runIds.length, 'run rows (a refused creation left its row)');
    await checkRuns(f, { ds, temporal: client, runIds, witness, expect: { lines: 10, events: 5 } });
    f.count('runs', runIds.length);
  } finally {
    await connection?.close().catch(() => undefined);
    await procs.stopAll(f);
    await witness.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return f.report();
}
