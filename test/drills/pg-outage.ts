// Drill: stop PostgreSQL (fast shutdown: sessions are terminated, new connections refused) for a while
// under load, then start it again. Meanwhile the api answers every request at once, 2xx or 503
// `{type: ServiceUnavailableError, errors}` (never a 500, never a hang); afterwards it recovers by itself.
// Activities retry: every run succeeds, with every status, SYSTEM event, log line and accepted USER event
// stored once, and every SSE stream delivers every event once. A drill of its own PostgreSQL (the stack's
// keeps serving the other tests) with a real api and worker process on it; Temporal is the stack's.
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { RunningPostgres, startEmbeddedPostgres } from '../../src/cli/postgres/embedded-postgres';
import { createDataSource, migrate } from '../../src/persistence/data-source';
import { bootstrapOrganization } from '../../src/services/accounts/accounts';
import { structureWithBuild } from '../support/builds';
import { freePort, getStack } from '../support/stack';
import { apiCaller, DrillReport, Findings, sleep, tempDir, until } from './kit';
import { Processes, startApiProcess, startWorkerProcess } from './processes';
import { Witness } from './witness';
import { checkRuns, DRILL_PROGRAM } from './run-checks';
import { compareFrames, followStream } from './sse-follower';

export interface PgOutageOptions {
  runs: number;
  outageMs: number;
  /** Each run's program prints `lines` lines and posts `events` events over `seconds`. */
  lines: number;
  events: number;
  seconds: number;
}

/** When a request was sent: before the stop, while stopped, while PostgreSQL starts again, after. */
type Phase = 'before' | 'outage' | 'restart' | 'after';

export async function pgOutageDrill(
  opts: PgOutageOptions = { runs: 20, outageMs: 10_000, lines: 40, events: 20, seconds: 14 },
): Promise<DrillReport> {
  const f = new Findings(
    'pg-outage',
    `PostgreSQL stopped for ${opts.outageMs / 1000} s under load, then started again`,
  );
  const { env, config } = getStack();
  const dir = tempDir('pg');
  const witness = await Witness.start();
  const procs = new Processes();
  const pgOptions = {
    dir: path.join(dir, 'postgres'),
    port: await freePort(),
    database: 'tarmac_drill',
    persistent: true,
    config,
  };
  let pg: RunningPostgres | undefined = await startEmbeddedPostgres(pgOptions);
  const ds = await createDataSource(pg.url, { applicationName: 'tarmac-drill', poolSize: 4 }).initialize();
  let stopLoad = false;
  try {
    await migrate(ds);
    const queue = `drill-pg-${randomUUID().slice(0, 8)}`;
    const api = await startApiProcess(procs, 'api', { DATABASE_URL: pg.url, TEMPORAL_TASK_QUEUE: queue });
    await startWorkerProcess(procs, 'worker', {
      DATABASE_URL: pg.url,
      TEMPORAL_TASK_QUEUE: queue,
      RUN_API_BASE_URL: api.baseUrl,
    });
    const { organization, value: key } = await bootstrapOrganization(ds, {
      organizationName: 'drill-pg',
      email: 'drill-pg@example.test',
      keyName: 'drill',
    });
    const s = await structureWithBuild(organization.organization_id, { files: { 'structure.py': DRILL_PROGRAM }, ds });

    const call = apiCaller(() => api.baseUrl, key, 15_000);
    const runBody = {
      args: [String(opts.lines), String(opts.seconds), String(opts.events)],
      env_vars: [{ name: 'DRILL_WITNESS', value: witness.url }],
    };
    const runIds: string[] = [];
    for (let i = 0; i < opts.runs; i++) {
      const res = await call('POST', `/api/structures/${s.structureId}/runs`, runBody);
      if (res.status !== 201) throw new Error(`creating a run answered ${res.status} ${res.text}`);
      runIds.push(res.body.structure_run_id);
    }
    const streams = runIds.map((runId) =>
      followStream(() => [api.baseUrl], runId, key, { deadline: Date.now() + 180_000 }),
    );

    // Load: reads and run creations, one request after another, every answer classified by phase.
    let phase = 'before' as Phase;
    let restartedAt = 0;
    let lastUnavailableAfterRestart = 0;
    const answers: Record<string, number> = {};
    const load = (async () => {
      for (let i = 0; !stopLoad; i++) {
        // Mostly reads; a run creation every 20th request (about one a second).
        const kind = i % 20 === 19 ? 3 : i % 3;
        const at = phase;
        let res;
        try {
          res =
            kind === 0
              ? await call('GET', `/api/structure-runs/${runIds[i % runIds.length]}`)
              : kind === 1
                ? await call('GET', `/api/structures/${s.structureId}/runs?page_size=5`)
                : kind === 2
                  ? await call('GET', `/api/structure-runs/${runIds[i % runIds.length]}/events?limit=5`)
                  : await call('POST', `/api/structures/${s.structureId}/runs`, {
                      ...runBody,
                      args: ['2', '0.2', '1'],
                    });
        } catch (err) {
          f.violation(`${at}: a request got no answer: ${(err as Error).message}`);
          await sleep(50);
          continue;
        }
        f.checked++;
        const ok = res.status >= 200 && res.status < 300;
        const unavailable =
          res.status === 503 &&
          res.body?.type === 'ServiceUnavailableError' &&
          Array.isArray(res.body.errors) &&
          res.body.errors.length > 0;
        answers[`${at} ${ok ? '2xx' : unavailable ? '503' : res.status}`] =
          (answers[`${at} ${ok ? '2xx' : unavailable ? '503' : res.status}`] ?? 0) + 1;
        if (!ok && !unavailable)
          f.violation(`${at}: ${res.status} ${res.text.slice(0, 200)}${api.whyFailed(res.text)}`);
        if (unavailable && at === 'after') lastUnavailableAfterRestart = Date.now();
        if (kind === 3 && res.status === 201) runIds.push(res.body.structure_run_id);
        await sleep(50);
      }
    })();

    const statuses = async () =>
      (await ds.query(`SELECT status FROM runs WHERE run_id = ANY($1::uuid[])`, [runIds])).map(
        (r: any) => r.status as string,
      );
    await until('every run to be RUNNING', 120_000, async () =>
      (await statuses()).every((x: string) => !['QUEUED', 'STARTING'].includes(x)) ? true : undefined,
    );
    await sleep(1000);

    // A burst of runs just before the stop: some are between QUEUED and RUNNING when it comes.
    const burst = await Promise.all(
      Array.from({ length: 5 }, () =>
        call('POST', `/api/structures/${s.structureId}/runs`, { ...runBody, args: ['2', '1', '1'] }),
      ),
    );
    for (const res of burst) if (res.status === 201) runIds.push(res.body.structure_run_id);
    phase = 'outage';
    const stoppedAt = Date.now();
    await pg.stop();
    pg = undefined;
    f.faults++;
    await sleep(opts.outageMs);
    phase = 'restart';
    pg = await startEmbeddedPostgres(pgOptions);
    phase = 'after';
    restartedAt = Date.now();
    f.notes.push(`PostgreSQL was down ${((restartedAt - stoppedAt) / 1000).toFixed(1)} s`);

    await until(
      'the api to be ready again',
      60_000,
      async () => ((await fetch(`${api.baseUrl}/ready`)).status === 200 ? true : undefined),
      100,
    ).catch((err: Error) => f.violation(err.message));
    f.notes.push(`api ready ${((Date.now() - restartedAt) / 1000).toFixed(1)} s after PostgreSQL was back`);
    const terminal = async () =>
      (await statuses()).every((x: string) => ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(x));
    await until('every run to end', 180_000, async () => ((await terminal()) ? true : undefined), 250).catch(
      (err: Error) => f.violation(err.message),
    );
    stopLoad = true;
    await load;
    // The load went on creating runs until now: the last of them are given the same time to end.
    await until(
      'every run created at the end to end',
      180_000,
      async () => ((await terminal()) ? true : undefined),
      250,
    ).catch((err: Error) => f.violation(err.message));
    if (lastUnavailableAfterRestart)
      f.notes.push(
        `last 503 ${((lastUnavailableAfterRestart - restartedAt) / 1000).toFixed(1)} s after PostgreSQL was back`,
      );
    f.notes.push(
      `answers: ${Object.entries(answers)
        .map(([k, v]) => `${k}: ${v}`)
        .join(', ')}`,
    );
    for (const [k, v] of Object.entries(answers)) f.count(k, v);
    if (!answers['outage 503']) f.violation('no request was answered 503 during the outage: was it an outage?');

    // Runs created during the load exist exactly once; refused ones left nothing behind.
    const [{ rows }] = await ds.query(`SELECT count(*)::int AS rows FROM runs WHERE resource_id = $1`, [s.structureId]);
    f.twice(rows - runIds.length, 'run rows (a refused creation left its row)');
    const [main, extra] = [runIds.slice(0, opts.runs), runIds.slice(opts.runs)];
    await checkRuns(f, {
      ds,
      temporal: env.client,
      runIds: main,
      witness,
      expect: { lines: opts.lines, events: opts.events },
      explain: api.whyFailed,
    });
    await checkRuns(f, {
      ds,
      temporal: env.client,
      runIds: extra,
      witness,
      expect: { lines: 2, events: 1 },
      explain: api.whyFailed,
    });

    const events: Array<{ run_id: string; seq: string; event_id: string }> = await ds.query(
      `SELECT run_id, seq, event_id FROM run_events WHERE run_id = ANY($1::uuid[]) ORDER BY run_id, seq`,
      [main],
    );
    (await Promise.all(streams)).forEach((got, i) => {
      const stored = events
        .filter((e) => e.run_id === main[i])
        .map((e) => ({ seq: Number(e.seq), event_id: e.event_id }));
      const [missing, repeated, wrong] = compareFrames(got.frames, stored);
      f.checked += got.frames.length;
      f.missing(missing, `events on the stream of run ${main[i]}`);
      f.twice(repeated, `events on the stream of run ${main[i]}`);
      if (wrong) f.violation(`the stream of run ${main[i]}: frames out of order or not the stored events`);
      if (!got.done) f.violation(`the stream of run ${main[i]} did not reach the end: ${got.breaks.join('; ')}`);
      for (const v of got.endViolations) f.violation(`a stream: ${v}`);
      f.count('streamReconnects', got.reconnects);
    });
    f.count('runs', runIds.length);
  } finally {
    stopLoad = true;
    await procs.stopAll(f);
    await ds.destroy().catch(() => undefined);
    await pg?.stop().catch(() => undefined);
    await witness.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return f.report();
}
