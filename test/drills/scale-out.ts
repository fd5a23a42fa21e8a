// Drill: the shape of a deployment beyond one host, on one machine. One PostgreSQL and one Temporal dev server
// (the stack's), one S3-compatible server (moto), 2 api processes with their blobs in it (BLOB_STORE=s3) and 2
// worker processes on a task queue of their own. It measures the throughput of 1 api + 1 worker against 2 + 2,
// creates `runs` runs alternately through both apis and SIGKILLs a worker mid-load, follows SSE streams on api A
// of runs whose events are posted through api B and SIGKILLs api A mid-stream (clients resume on B), and
// uploads assets through one api and downloads them through the other. Lost, stuck or duplicated runs and
// missed SSE events must be 0.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import os from 'node:os';
import { structureWithBuild } from '../harness/builds';
import { as } from '../harness/client';
import { startS3Server } from '../harness/s3-server';
import { getStack, newTenant } from '../harness/stack';
import { DrillReport, Findings, sleep, until } from './kit';
import { Processes, startApiProcess, startWorkerProcess } from './processes';
import { checkRuns, DRILL_PROGRAM } from './run-checks';
import { compareFrames, followStream } from './sse-follower';
import { Witness } from './witness';

export interface ScaleOutOptions {
  /** Runs created across both apis while a worker is killed. */
  runs: number;
  /** Runs per shape in the throughput comparison (1 + 1, then 2 + 2). */
  throughputRuns: number;
  /** SSE clients on api A, spread over `streamRuns` runs posting `events` events each through api B. */
  streams: number;
  streamRuns: number;
  events: number;
}

const TERMINAL = ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'];

export async function scaleOutDrill(
  opts: ScaleOutOptions = { runs: 500, throughputRuns: 100, streams: 50, streamRuns: 10, events: 30 },
): Promise<DrillReport> {
  const f = new Findings('scale-out', '2 apis + 2 workers on S3 blobs: a worker SIGKILLed mid-load, an api mid-stream');
  const { ds, env } = getStack();
  const queue = `drill-scale-out-${randomUUID().slice(0, 8)}`;
  const witness = await Witness.start();
  const s3 = await startS3Server();
  const procs = new Processes();
  try {
    await s3.createBucket('tarmac-scale-out');
    const shared = {
      TEMPORAL_TASK_QUEUE: queue,
      // A silent worker is presumed lost after 10 s (snapshotted into each run by the api that creates it). Not
      // the worker-kill drill's 2 s: under this load heartbeats of live workers are late by more than that.
      RUN_HEARTBEAT_TIMEOUT_SECONDS: '10',
      BLOB_STORE: 's3',
      BLOB_S3_BUCKET: 'tarmac-scale-out',
      BLOB_S3_ENDPOINT: s3.endpoint,
      BLOB_S3_FORCE_PATH_STYLE: 'true',
      BLOB_S3_ACCESS_KEY_ID: s3.admin.accessKeyId,
      BLOB_S3_SECRET_ACCESS_KEY: s3.admin.secretAccessKey,
    };
    const [apiA, apiB] = await Promise.all([
      startApiProcess(procs, 'api-A', shared),
      startApiProcess(procs, 'api-B', shared),
    ]);
    // User code posts its events through api B.
    const workerEnv = { ...shared, RUN_API_BASE_URL: apiB.baseUrl };
    const worker1 = await startWorkerProcess(procs, 'worker-1', workerEnv);

    const t = await newTenant('drill-scale-out');
    const s = await structureWithBuild(t.organizationId, { files: { 'structure.py': DRILL_PROGRAM } });
    const allRuns: string[] = [];
    let created = 0;
    const create = async (baseUrl: string, args: string[]) => {
      for (;;) {
        const res = await as(t.key, baseUrl).post(`/api/structures/${s.structureId}/runs`, {
          args,
          env_vars: [{ name: 'DRILL_WITNESS', value: witness.url }],
        });
        if (res.status === 201) {
          created++;
          allRuns.push(res.body.structure_run_id);
          return res.body.structure_run_id as string;
        }
        if (res.status !== 503) throw new Error(`creating a run answered ${res.status} ${res.text}`);
        f.count('creations answered 503 (retried)');
        await sleep(100);
      }
    };
    const allEnded = async (ids: string[]) => {
      const [{ open }] = await ds.query(
        `SELECT count(*)::int AS open FROM runs WHERE run_id = ANY($1::uuid[]) AND NOT (status = ANY($2::text[]))`,
        [ids, TERMINAL],
      );
      return open === 0 ? true : undefined;
    };
    /** Creates `n` short runs through `apis` in turn, 20 at a time; runs per second from the first create to the last end. */
    const throughput = async (apis: string[], n: number) => {
      const started = Date.now();
      const ids: string[] = [];
      let next = 0;
      await Promise.all(
        Array.from({ length: 20 }, async () => {
          while (next < n) {
            const i = next++;
            ids.push(await create(apis[i % apis.length], ['1', '0', '0']));
          }
        }),
      );
      await until(`${n} runs to end`, 600_000, () => allEnded(ids), 100);
      return n / ((Date.now() - started) / 1000);
    };

    // 1. Throughput: the single-process shape, then 2 + 2.
    const single = await throughput([apiA.baseUrl], opts.throughputRuns);
    await startWorkerProcess(procs, 'worker-2', workerEnv);
    const double = await throughput([apiA.baseUrl, apiB.baseUrl], opts.throughputRuns);
    const cores = os.cpus().length;
    f.notes.push(
      `throughput (${opts.throughputRuns} runs each, ${cores} cores): 1 api + 1 worker ${single.toFixed(1)} runs/s, ` +
        `2 + 2 ${double.toFixed(1)} runs/s, ratio ${(double / single).toFixed(2)}`,
    );
    f.count('cores', cores);
    f.count('throughput ratio x100', Math.round((100 * double) / single));

    // 2. Load across both apis; worker-1 SIGKILLed once a third has been created.
    const load: string[] = [];
    let next = 0;
    let killed = false;
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        while (next < opts.runs) {
          const i = next++;
          if (!killed && i >= opts.runs / 3) {
            killed = true;
            await procs.kill(worker1, 'SIGKILL');
            f.faults++;
          }
          load.push(await create(i % 2 ? apiB.baseUrl : apiA.baseUrl, ['2', '0.2', '1']));
        }
      }),
    );
    await until(`the ${opts.runs} runs to end`, 600_000, () => allEnded(load), 200);
    const ended: Array<{ status: string; n: number }> = await ds.query(
      `SELECT status, count(*)::int AS n FROM runs WHERE run_id = ANY($1::uuid[]) GROUP BY status ORDER BY status`,
      [load],
    );
    f.notes.push(`the ${opts.runs} runs of the load ended ${ended.map((r) => `${r.n} ${r.status}`).join(', ')}`);
    const [{ lost }] = await ds.query(
      `SELECT count(*)::int AS lost FROM runs WHERE run_id = ANY($1::uuid[]) AND status = 'ERROR'
         AND status_detail->>'reason' IS DISTINCT FROM 'WorkerLost'`,
      [load],
    );
    if (lost) {
      const reasons: Array<{ reason: string; n: number }> = await ds.query(
        `SELECT coalesce(status_detail->>'reason', status_detail::text) AS reason, count(*)::int AS n FROM runs
          WHERE run_id = ANY($1::uuid[]) AND status = 'ERROR' GROUP BY 1 ORDER BY 2 DESC`,
        [load],
      );
      f.violation(
        `${lost} runs ended ERROR for another reason than the killed worker: ${reasons.map((r) => `${r.n} ${r.reason}`).join(', ')}`,
      );
    }
    // By design a run whose process died with its worker ends ERROR (WorkerLost) and is not run twice.
    f.count('runs ended ERROR (WorkerLost) with the killed worker', ended.find((r) => r.status === 'ERROR')?.n ?? 0);

    // 3. Assets uploaded through api A, read back through api B: by B's own URL and by the store's presigned one.
    const bucketId = (await as(t.key, apiA.baseUrl).post('/api/buckets', { name: 'scale-out' })).body.bucket_id;
    for (let i = 0; i < 5; i++) {
      const body = randomBytes(256 * 1024 * (i + 1));
      const name = `asset-${i}.bin`;
      const put = await as(t.key, apiA.baseUrl).post(`/api/buckets/${bucketId}/asset-urls/${name}`, {
        operation: 'PUT',
      });
      const up = await fetch(put.body.url, { method: 'PUT', body });
      if (up.status !== 200) f.violation(`uploading ${name} through api A answered ${up.status}`);
      const digest = createHash('sha256').update(body).digest('hex');
      for (const operation of ['GET', undefined]) {
        const url = (
          await as(t.key, apiB.baseUrl).post(
            `/api/buckets/${bucketId}/asset-urls/${name}`,
            operation ? { operation } : {},
          )
        ).body.url;
        const down = await fetch(url);
        const got = createHash('sha256')
          .update(Buffer.from(await down.arrayBuffer()))
          .digest('hex');
        f.checked++;
        if (down.status !== 200 || got !== digest)
          f.missing(1, `asset ${name} read through the other api (${operation ?? 'api URL'}: ${down.status})`);
      }
    }
    f.notes.push('5 assets (256 KiB to 1.25 MiB) uploaded through api A read back intact through api B');
    // 4. SSE on api A for runs posting through api B; api A SIGKILLed mid-stream, clients resume on B.
    const streamRuns = await Promise.all(
      Array.from({ length: opts.streamRuns }, () => create(apiA.baseUrl, ['0', '4', String(opts.events)])),
    );
    let apiKilled = false;
    const seen = new Array<number>(opts.streams).fill(0);
    const deadline = Date.now() + 180_000;
    const clients = Array.from({ length: opts.streams }, (_, i) =>
      followStream(
        () => (apiKilled ? [apiB.baseUrl] : [apiA.baseUrl, apiB.baseUrl]),
        streamRuns[i % opts.streamRuns],
        t.key,
        { deadline, onFrame: () => seen[i]++ },
      ),
    );
    await until('every stream to deliver its first frames', 120_000, async () =>
      seen.every((n) => n >= 3) ? true : undefined,
    );
    await procs.kill(apiA.child, 'SIGKILL');
    apiKilled = true;
    f.faults++;
    const followed = await Promise.all(clients);
    const events: Array<{ run_id: string; seq: string; event_id: string }> = await ds.query(
      `SELECT run_id, seq, event_id FROM run_events WHERE run_id = ANY($1::uuid[]) ORDER BY run_id, seq`,
      [streamRuns],
    );
    let missed = 0;
    followed.forEach((got, i) => {
      const runId = streamRuns[i % opts.streamRuns];
      const stored = events
        .filter((e) => e.run_id === runId)
        .map((e) => ({ seq: Number(e.seq), event_id: e.event_id }));
      const [missing, repeated, wrong] = compareFrames(got.frames, stored);
      missed += missing;
      f.checked += got.frames.length;
      f.missing(missing, `SSE events on stream ${i} (run ${runId})`);
      f.twice(repeated, `SSE events on stream ${i} (run ${runId})`);
      if (wrong) f.violation(`stream ${i}: frames out of order or not the stored events`);
      if (!got.done) f.violation(`stream ${i} did not reach the run's end: ${got.breaks.join('; ')}`);
      for (const v of got.endViolations) f.violation(`a stream: ${v}`);
      if (got.reconnects < 1) f.violation(`stream ${i} never reconnected: was it on the killed api?`);
    });
    f.count('SSE events missed after reconnect', missed);
    f.notes.push(`${opts.streams} SSE streams on api A, ${missed} events missed after resuming on api B`);

    // Every run: terminal, once, agreeing with its workflow. Lost ones ended ERROR (WorkerLost).
    await checkRuns(f, {
      ds,
      temporal: env.client,
      runIds: allRuns,
      witness,
      expect: { statuses: ['SUCCEEDED', 'ERROR'] },
      explain: apiB.whyFailed,
    });
    const [{ rows }] = await ds.query(`SELECT count(*)::int AS rows FROM runs WHERE resource_id = $1`, [s.structureId]);
    f.twice(rows - created, 'run rows (more rows than 201 answers)');
    f.count('runs', created);
  } finally {
    await procs.stopAll(f);
    await witness.close();
    await s3.stop();
  }
  return f.report();
}
