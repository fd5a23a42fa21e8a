// Drill: SIGKILL an api process while it serves open SSE streams of running runs. The clients reconnect
// with Last-Event-ID to a second api process (they share nothing but PostgreSQL) and must end up with
// every event of their run exactly once, in order, although the runs kept posting events meanwhile.
import { structureWithBuild } from '../harness/builds';
import { as } from '../harness/client';
import { getStack, newTenant } from '../harness/stack';
import { DrillReport, Findings, until } from './kit';
import { Processes, startApiProcess } from './processes';
import { Witness } from './witness';
import { checkRuns, DRILL_PROGRAM } from './run-checks';
import { compareFrames, followStream } from './sse-follower';

export interface ApiKillOptions {
  /** Open streams when the api is killed, spread evenly over `runs` runs. */
  streams: number;
  runs: number;
  /** Events each run posts, over `seconds`. */
  events: number;
  seconds: number;
}

export async function apiKillDrill(
  opts: ApiKillOptions = { streams: 100, runs: 10, events: 40, seconds: 4 },
): Promise<DrillReport> {
  const f = new Findings('api-kill', `SIGKILL of an api process serving ${opts.streams} SSE streams`);
  const { ds, env } = getStack();
  const witness = await Witness.start();
  const procs = new Processes();
  try {
    const [first, second] = await Promise.all([startApiProcess(procs, 'api-1'), startApiProcess(procs, 'api-2')]);
    const t = await newTenant('drill-api-kill');
    const s = await structureWithBuild(t.organizationId, { files: { 'structure.py': DRILL_PROGRAM } });
    // The runs run on the stack's worker and post their events to the stack's api: neither is killed.
    const runIds: string[] = [];
    for (let i = 0; i < opts.runs; i++) {
      const res = await as(t.key).post(`/api/structures/${s.structureId}/runs`, {
        args: ['0', String(opts.seconds), String(opts.events)],
        env_vars: [{ name: 'DRILL_WITNESS', value: witness.url }],
      });
      if (res.status !== 201) throw new Error(`creating a run answered ${res.status} ${res.text}`);
      runIds.push(res.body.structure_run_id);
    }

    let killed = false;
    const seen = new Array<number>(opts.streams).fill(0);
    const deadline = Date.now() + 120_000;
    const clients = Array.from({ length: opts.streams }, (_, i) =>
      followStream(() => (killed ? [second.baseUrl] : [first.baseUrl, second.baseUrl]), runIds[i % opts.runs], t.key, {
        deadline,
        onFrame: () => seen[i]++,
      }),
    );
    // Kill once every stream is open and its run under way: each client has had a USER event.
    await until(
      'every stream to deliver its first frames',
      60_000,
      async () => (seen.every((n) => n >= 3) ? true : undefined),
      20,
    );
    await procs.kill(first.child, 'SIGKILL');
    killed = true;
    f.faults++;
    const killedAt = Date.now();
    const followed = await Promise.all(clients);
    f.notes.push(`${opts.streams} streams complete ${((Date.now() - killedAt) / 1000).toFixed(1)} s after the kill`);

    const events: Array<{ run_id: string; seq: string; event_id: string }> = await ds.query(
      `SELECT run_id, seq, event_id FROM run_events WHERE run_id = ANY($1::uuid[]) ORDER BY run_id, seq`,
      [runIds],
    );
    followed.forEach((got, i) => {
      const runId = runIds[i % opts.runs];
      const stored = events
        .filter((e) => e.run_id === runId)
        .map((e) => ({ seq: Number(e.seq), event_id: e.event_id }));
      const [missing, repeated, wrong] = compareFrames(got.frames, stored);
      f.checked += got.frames.length;
      f.missing(missing, `events on stream ${i} (run ${runId})`);
      f.twice(repeated, `events on stream ${i} (run ${runId})`);
      if (wrong) f.violation(`stream ${i}: frames out of order or not the stored events`);
      if (!got.done) f.violation(`stream ${i} did not reach the run's end: ${got.breaks.join('; ')}`);
      for (const v of got.endViolations) f.violation(`a stream: ${v}`);
      f.count('reconnects', got.reconnects);
      if (got.reconnects < 1) f.violation(`stream ${i} never reconnected: was it on the killed api?`);
    });
    f.count('streams', followed.length);
    f.count(
      'frames',
      followed.reduce((n, c) => n + c.frames.length, 0),
    );
    await checkRuns(f, { ds, temporal: env.client, runIds, witness, expect: { events: opts.events } });
  } finally {
    await procs.stopAll(f);
    await witness.close();
  }
  return f.report();
}
