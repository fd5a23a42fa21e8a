// Drill: an operator's worst day, on the whole local platform as `npm start` runs it (launcher, supervisor,
// PostgreSQL, Temporal dev server, api, worker), its data on a small filesystem of the drill's own (a sized
// tmpfs). Four faults, each with runs in flight, an SSE client following each of them and run creations
// arriving meanwhile:
//   pg-kill        SIGKILL of the postmaster: the supervisor restarts it in place
//   temporal-kill  SIGKILL of the Temporal dev server: likewise
//   power-cut      SIGKILL of every process of the platform at once; then `npm start` again on the same data
//   disk-full      the data filesystem filled to the last byte for a while, then freed
// The audit, per fault: every run answered 201 exists and ends, within 2 minutes, in the status its workflow
// returned; no code ran twice; every log line and accepted event is stored once, or the run records its loss
// (`status_detail.output_lost`); every SSE client that resumes until the end comment got every event once; the
// api and the worker outlive a dependency's restart (same pids) and /ready comes back by itself; while the
// disk is full, creations answer 2xx or 503 with Retry-After, never another error.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { DataSource } from 'typeorm';
import { embeddedPassword, embeddedPostgresUrl } from '../../src/cli/postgres/embedded-postgres';
import { createDataSource } from '../../src/persistence/data-source';
import { bootstrapOrganization } from '../../src/services/accounts/accounts';
import { structureWithBuild } from '../harness/builds';
import { freePort, getStack } from '../harness/stack';
import { apiCaller, descendantsOf, DrillReport, Findings, pidAlive, sleep, tempDir, until } from './kit';
import { DrillChild, Processes, processEnv } from './processes';
import { checkRuns, DRILL_PROGRAM } from './run-checks';
import { compareFrames, Followed, followStream } from './sse-follower';
import { Witness } from './witness';

const START = path.resolve(__dirname, '..', '..', 'src', 'cli', 'start.js');
const TERMINAL = ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'];
/** A run not terminal this long after its fault was over is stuck. */
const STUCK_AFTER_MS = 120_000;

export interface CrashFaultsOptions {
  /** Runs in flight at each fault, each printing `lines` lines and posting `events` events over `seconds`. */
  runs: number;
  lines: number;
  events: number;
  seconds: number;
  /** Size of the data filesystem (MiB), and how long it stays full. */
  diskMb: number;
  fullMs: number;
}

type Fault = 'pg-kill' | 'temporal-kill' | 'power-cut' | 'disk-full';

/** The platform as `npm start` runs it, on the drill's ports and data directory. */
class Platform {
  launcher!: DrillChild;
  readonly baseUrl: string;

  constructor(
    private readonly procs: Processes,
    readonly dataDir: string,
    readonly ports: { api: number; pg: number; temporal: number; ui: number },
  ) {
    this.baseUrl = `http://127.0.0.1:${ports.api}`;
  }

  async start(name: string): Promise<number> {
    const t0 = Date.now();
    const { config } = getStack();
    this.launcher = this.procs.spawn(
      name,
      process.execPath,
      [START],
      processEnv({
        DATA_DIR: this.dataDir,
        PORT: String(this.ports.api),
        PUBLIC_BASE_URL: this.baseUrl,
        EMBEDDED_POSTGRES_PORT: String(this.ports.pg),
        TEMPORAL_DEV_PORT: String(this.ports.temporal),
        TEMPORAL_DEV_UI_PORT: String(this.ports.ui),
        // The drill's structures are built into the stack's build directory (structureWithBuild).
        BUILD_DIR: config.buildDir,
        LOG_LEVEL: 'warn',
        // The free-space watermark (where the platform has one) scaled to the drill's small disk: the platform is
        // ready on it, and refuses new work once the filler has taken most of it.
        DISK_FREE_MIN_MB: '64',
        ...Object.fromEntries(
          ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'TEMPORAL_TASK_QUEUE', 'SECRETS_KEY', 'BLOB_DIR'].map((k) => [
            k,
            undefined,
          ]),
        ),
      }),
    );
    await this.procs.waitForLine(this.launcher, /api and worker ready/, 240_000);
    return Date.now() - t0;
  }

  get pgUrl(): string {
    return embeddedPostgresUrl(this.ports.pg, embeddedPassword(path.join(this.dataDir, 'postgres'))!);
  }

  get temporalAddress(): string {
    return `127.0.0.1:${this.ports.temporal}`;
  }

  /** Every process of the platform (the launcher and all below it, user processes of runs included). */
  processes(): Array<{ pid: number; command: string }> {
    const root = this.launcher.proc.pid!;
    return [{ pid: root, command: 'launcher' }, ...descendantsOf(root)];
  }

  pidOf(pattern: RegExp): number | undefined {
    return this.processes().find((p) => pattern.test(p.command))?.pid;
  }

  postmasterPid(): number {
    return Number(fs.readFileSync(path.join(this.dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
  }

  async ready(): Promise<boolean> {
    const res = await fetch(`${this.baseUrl}/ready`, { signal: AbortSignal.timeout(3000) }).catch(() => undefined);
    return res?.status === 200;
  }
}

/** A tmpfs of `mb` MiB on `dir`, for the platform's data. */
function mountSmallDisk(dir: string, mb: number): void {
  fs.mkdirSync(dir, { recursive: true });
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${mb}m,mode=0711`, 'tarmac-drill-data', dir]);
}

function unmount(dir: string): void {
  try {
    execFileSync('umount', ['-l', dir], { stdio: 'ignore' });
  } catch {
    // not mounted
  }
}

/** Writes zeros into `file` until the filesystem has no byte left; answers how many bytes it took. */
function fillDisk(file: string): number {
  const fd = fs.openSync(file, 'w');
  const chunk = Buffer.alloc(1024 * 1024);
  let written = 0;
  try {
    for (;;) {
      try {
        written += fs.writeSync(fd, chunk);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
        // The last partial megabyte, down to the byte.
        for (let size = chunk.length / 2; size >= 1; size = Math.floor(size / 2)) {
          try {
            for (;;) written += fs.writeSync(fd, chunk, 0, size);
          } catch {
            // next smaller piece
          }
        }
        return written;
      }
    }
  } finally {
    fs.closeSync(fd);
  }
}

export async function crashFaultsDrill(
  opts: CrashFaultsOptions = { runs: 10, lines: 30, events: 10, seconds: 12, diskMb: 384, fullMs: 20_000 },
): Promise<DrillReport> {
  const f = new Findings(
    'crash-faults',
    `npm start on a ${opts.diskMb} MiB tmpfs: SIGKILL of PostgreSQL, of Temporal, of every process at once, a full disk; ${opts.runs} runs in flight each`,
  );
  const root = tempDir('crash');
  const dataDir = path.join(root, 'data');
  const witness = await Witness.start();
  const procs = new Processes();
  const platform = new Platform(procs, dataDir, {
    api: await freePort(),
    pg: await freePort(),
    temporal: await freePort(),
    ui: await freePort(),
  });
  let ds: DataSource | undefined;
  let mounted = false;
  try {
    mountSmallDisk(dataDir, opts.diskMb);
    mounted = true;
    f.notes.push(`npm start ready in ${((await platform.start('npm-start')) / 1000).toFixed(1)} s`);
    ds = await createDataSource(platform.pgUrl, { applicationName: 'tarmac-drill', poolSize: 4 }).initialize();
    const { organization, value: key } = await bootstrapOrganization(ds, {
      organizationName: 'drill-crash',
      email: 'drill-crash@example.test',
      keyName: 'drill',
    });
    const s = await structureWithBuild(organization.organization_id, { files: { 'structure.py': DRILL_PROGRAM }, ds });
    const call = apiCaller(() => platform.baseUrl, key, 20_000);
    const runBody = (args: string[]) => ({ args, env_vars: [{ name: 'DRILL_WITNESS', value: witness.url }] });

    const phase = async (fault: Fault, inject: () => Promise<void>) => {
      const at = (m: string) => `${fault}: ${m}`;
      const violationsBefore = f.violations.length;
      // Runs in flight, each followed by an SSE client.
      const runIds: string[] = [];
      for (let i = 0; i < opts.runs; i++) {
        const res = await call(
          'POST',
          `/api/structures/${s.structureId}/runs`,
          runBody([String(opts.lines), String(opts.seconds), String(opts.events)]),
        );
        if (res.status !== 201) throw new Error(at(`creating a run answered ${res.status} ${res.text}`));
        runIds.push(res.body.structure_run_id);
      }
      const streams = runIds.map((runId) =>
        followStream(() => [platform.baseUrl], runId, key, {
          deadline: Date.now() + 300_000,
          maxConnections: 5000,
        }),
      );
      const statuses = async (ids: string[]) =>
        ds!
          .query(`SELECT status FROM runs WHERE run_id = ANY($1::uuid[])`, [ids])
          .then((rows: Array<{ status: string }>) => rows.map((r) => r.status))
          .catch(() => undefined);
      await until(at('every run to be RUNNING'), 120_000, async () =>
        (await statuses(runIds))?.every((x) => !['QUEUED', 'STARTING'].includes(x)) ? true : undefined,
      );
      await sleep(1000);

      // Creations arriving all along, every answer counted; one that is neither 201 nor a 503 with Retry-After is a finding.
      const created: string[] = [];
      const answers: Record<string, number> = {};
      let stopLoad = false;
      const load = (async () => {
        while (!stopLoad) {
          const res = await call('POST', `/api/structures/${s.structureId}/runs`, runBody(['2', '0.5', '1'])).catch(
            (err: Error) => ({ status: 0, text: String(err.cause ?? err.message), retryAfter: null, body: undefined }),
          );
          f.checked++;
          const kind =
            res.status === 201
              ? '201'
              : res.status === 503
                ? res.retryAfter
                  ? '503'
                  : '503 without Retry-After'
                : res.status === 0
                  ? 'no answer'
                  : String(res.status);
          answers[kind] = (answers[kind] ?? 0) + 1;
          if (res.status === 201) created.push(res.body.structure_run_id);
          else if (res.status === 503 && res.body?.type !== 'ServiceUnavailableError')
            f.violation(at(`a creation answered 503 ${res.text.slice(0, 200)}`));
          // Out of space is unavailability, with a time to retry after (issue 30); other 503s may go without.
          else if (res.status === 503 && !res.retryAfter && fault === 'disk-full')
            f.violation(
              at(`a creation answered 503 without Retry-After while the disk was full: ${res.text.slice(0, 200)}`),
            );
          else if (res.status !== 503 && res.status !== 0)
            f.violation(at(`a creation answered ${res.status} ${res.text.slice(0, 200)}`));
          await sleep(fault === 'power-cut' ? 250 : 400);
        }
      })();

      const apiPid = platform.pidOf(/dist\/src\/api\/main\.js/);
      const workerPid = platform.pidOf(/dist\/src\/worker\/main\.js/);
      // /ready, sampled from the fault on: when it stopped answering 200, and when it came back by itself (after
      // the power cut: once npm start ran again, which inject does).
      const faultAt = Date.now();
      let notReadyAt = 0;
      let backAt = 0;
      let sampling = true;
      const sampler = (async () => {
        while (sampling && !backAt) {
          const ok = await platform.ready();
          if (!ok && !notReadyAt) notReadyAt = Date.now();
          if (ok && notReadyAt) backAt = Date.now();
          await sleep(100);
        }
      })();
      await inject();
      f.faults++;
      const injectedMs = Date.now() - faultAt;
      await until(at('/ready to answer 200 again'), 120_000, async () =>
        backAt || (!notReadyAt && Date.now() - faultAt > 10_000 && (await platform.ready())) ? true : undefined,
      ).catch((err: Error) => f.violation(err.message));
      sampling = false;
      await sampler;
      const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
      f.notes.push(
        at(
          (notReadyAt
            ? `/ready not 200 from ${secs(notReadyAt - faultAt)}, 200 again ${secs((backAt || Date.now()) - faultAt)} after the fault`
            : '/ready stayed 200') + (injectedMs > 1000 ? ` (the fault itself took ${secs(injectedMs)})` : ''),
        ),
      );
      if (fault === 'pg-kill' || fault === 'temporal-kill') {
        if (
          platform.pidOf(/dist\/src\/api\/main\.js/) !== apiPid ||
          platform.pidOf(/dist\/src\/worker\/main\.js/) !== workerPid
        )
          f.violation(at('the api or the worker was replaced: they should ride out a restart of a dependency'));
      }
      await sleep(2000);
      stopLoad = true;
      await load;
      f.notes.push(
        at(
          `creations meanwhile: ${Object.entries(answers)
            .map(([k, v]) => `${k}: ${v}`)
            .join(', ')}`,
        ),
      );
      for (const [k, v] of Object.entries(answers)) f.count(`${fault} ${k}`, v);

      // None stuck: every run terminal within 2 minutes of the fault being over.
      const all = [...runIds, ...created];
      await until(
        at(`every run to end within ${STUCK_AFTER_MS / 1000} s`),
        STUCK_AFTER_MS,
        async () => ((await statuses(all))?.every((x) => TERMINAL.includes(x)) ? true : undefined),
        500,
      ).catch((err: Error) => f.violation(err.message));

      const connection = await Connection.connect({ address: platform.temporalAddress });
      try {
        const temporal = new Client({ connection });
        const before = f.violations.length;
        // A power cut kills runs with their worker (ERROR, as their workflow says); otherwise they all succeed.
        const statusesAllowed = fault === 'power-cut' || fault === 'disk-full' ? TERMINAL : ['SUCCEEDED'];
        await checkRuns(f, {
          ds: ds!,
          temporal,
          runIds,
          witness,
          expect: { statuses: statusesAllowed, lines: opts.lines, events: opts.events, lossRecorded: true },
        });
        await checkRuns(f, {
          ds: ds!,
          temporal,
          runIds: created,
          witness,
          expect: { statuses: statusesAllowed, lines: 2, events: 1, lossRecorded: true },
        });
        for (let i = before; i < f.violations.length; i++) f.violations[i] = at(f.violations[i]);
      } finally {
        await connection.close();
      }
      const byStatus: Record<string, number> = {};
      for (const st of (await statuses(all)) ?? []) byStatus[st] = (byStatus[st] ?? 0) + 1;
      f.notes.push(
        at(
          `${all.length} runs: ${Object.entries(byStatus)
            .map(([k, v]) => `${v} ${k}`)
            .join(', ')}`,
        ),
      );
      const lossRecorded = await ds!.query(
        `SELECT count(*)::int AS n FROM runs WHERE run_id = ANY($1::uuid[]) AND status_detail ? 'output_lost'`,
        [all],
      );
      if (lossRecorded[0].n) f.notes.push(at(`${lossRecorded[0].n} runs record lost output`));

      // Every SSE client that resumed until the end comment got every event once.
      const events: Array<{ run_id: string; seq: string; event_id: string }> = await ds!.query(
        `SELECT run_id, seq, event_id FROM run_events WHERE run_id = ANY($1::uuid[]) ORDER BY run_id, seq`,
        [runIds],
      );
      const followed: Followed[] = await Promise.all(streams);
      let reconnects = 0;
      followed.forEach((got, i) => {
        const stored = events
          .filter((e) => e.run_id === runIds[i])
          .map((e) => ({ seq: Number(e.seq), event_id: e.event_id }));
        const [missing, repeated, wrong] = compareFrames(got.frames, stored);
        f.checked += got.frames.length;
        f.missing(missing, at(`events on the stream of run ${runIds[i]}`));
        f.twice(repeated, at(`events on the stream of run ${runIds[i]}`));
        if (wrong) f.violation(at(`the stream of run ${runIds[i]}: frames out of order or not the stored events`));
        if (!got.done)
          f.violation(
            at(`the stream of run ${runIds[i]} never got its end comment: ${got.breaks.slice(-3).join('; ')}`),
          );
        for (const v of got.endViolations) f.violation(at(`the stream of run ${runIds[i]}: ${v}`));
        reconnects += got.reconnects;
      });
      f.notes.push(at(`${opts.runs} SSE clients, ${reconnects} reconnections`));
      f.notes.push(
        at(
          f.violations.length === violationsBefore
            ? 'audit clean'
            : `${f.violations.length - violationsBefore} findings`,
        ),
      );
    };

    // 1. The postmaster, SIGKILLed: the supervisor restarts PostgreSQL on its data and port.
    await phase('pg-kill', async () => {
      process.kill(platform.postmasterPid(), 'SIGKILL');
    });

    // 2. The Temporal dev server, SIGKILLed: restarted on its SQLite file and port.
    await phase('temporal-kill', async () => {
      const pid = platform.pidOf(/ server start-dev /);
      if (!pid) throw new Error('no Temporal dev server among the platform processes');
      process.kill(pid, 'SIGKILL');
    });

    // 3. A power cut: every process of the platform at once; then npm start again, on the same data.
    await phase('power-cut', async () => {
      const all = platform.processes();
      for (const p of all) {
        try {
          process.kill(p.pid, 'SIGKILL');
        } catch {
          // gone already
        }
      }
      await until('every process of the platform to be gone', 30_000, async () =>
        all.every((p) => !pidAlive(p.pid)) ? true : undefined,
      );
      f.notes.push(`power-cut: ${all.length} processes SIGKILLed at once`);
      await sleep(1000);
      f.notes.push(
        `power-cut: npm start ready again in ${((await platform.start('npm-start-2')) / 1000).toFixed(1)} s`,
      );
    });

    // 4. The data filesystem full to the last byte for a while, then freed.
    await phase('disk-full', async () => {
      const filler = path.join(dataDir, 'filler');
      const bytes = fillDisk(filler);
      f.notes.push(`disk-full: ${(bytes / 1024 / 1024).toFixed(0)} MiB written until the filesystem was full`);
      await sleep(opts.fullMs);
      fs.rmSync(filler, { force: true });
    });
  } finally {
    await ds?.destroy().catch(() => undefined);
    await procs.stopAll(f, 60_000);
    await witness.close();
    if (mounted) unmount(dataDir);
    fs.rmSync(root, { recursive: true, force: true });
  }
  return f.report();
}
