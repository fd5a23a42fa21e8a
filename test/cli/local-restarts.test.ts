// `npm start`'s supervisor on real processes: the whole local platform (its own PostgreSQL, Temporal dev
// server, api and worker in a directory of the test's own), then a SIGKILL of the postmaster and one of the
// Temporal dev server. Each comes back by itself on the same port and data while the api and the worker keep
// running (same pids) and /ready answers 200 again. Then PostgreSQL is killed with a data directory it can
// no longer start from: after the bounded restarts everything stops, with one line saying why.
import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client as TemporalClient, Connection } from '@temporalio/client';
import { expect } from 'chai';
import { Client } from 'pg';
import { childEnv } from '../../src/config';
import { embeddedPassword, embeddedPostgresUrl } from '../../src/cli/postgres/embedded-postgres';
import { RESTART_POLICY } from '../../src/cli/start/restarts';
import { descendantsOf, pidAlive, sleep, until } from '../drills/kit';
import { freePort } from '../harness/stack';

const START = path.resolve(__dirname, '..', '..', 'src', 'cli', 'start.js');

/** `npm start` as a child: its output kept, lines awaited. */
class Started {
  readonly proc: ChildProcess;
  output = '';
  readonly exited: Promise<number | null>;

  constructor(env: NodeJS.ProcessEnv) {
    this.proc = spawn(process.execPath, [START], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.proc.stdout!.on('data', (d: Buffer) => (this.output += d.toString()));
    this.proc.stderr!.on('data', (d: Buffer) => (this.output += d.toString()));
    this.exited = new Promise((resolve) => this.proc.on('exit', (code) => resolve(code)));
  }

  /** Waits until the output, from `from` on, matches `line`. */
  async waitFor(line: RegExp, timeoutMs: number, from = 0): Promise<void> {
    await until(`npm start to print ${line}\n${this.output.slice(-3000)}`, timeoutMs, async () =>
      line.test(this.output.slice(from)) ? true : this.proc.exitCode !== null ? false : undefined,
    ).then((seen) => {
      // From a Go panic's first line when there is one (its stack would push the cause out of a tail).
      const panicAt = this.output.search(/\bpanic[:(]/);
      const shown =
        panicAt >= 0 ? this.output.slice(Math.max(0, panicAt - 2000), panicAt + 3000) : this.output.slice(-3000);
      if (!seen) throw new Error(`npm start exited before printing ${line}:\n${shown}`);
    });
  }
}

const pidOf = (root: number, pattern: RegExp) => {
  const found = descendantsOf(root).filter((p) => pattern.test(p.command));
  expect(found, `one process like ${pattern} under ${root}`).to.have.lengthOf(1);
  return found[0].pid;
};

describe('npm start: restarting a crashed PostgreSQL or Temporal dev server in place', function () {
  this.timeout(15 * 60_000);
  let dir: string;
  let started: Started | undefined;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tarmac-restarts-'));
    fs.chmodSync(dir, 0o755); // as root, the server's own user must reach its data directory
  });
  afterEach(async () => {
    if (started && started.proc.exitCode === null) {
      started.proc.kill('SIGTERM');
      await started.exited;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('brings each back on its port and data with the api and worker untouched; stops everything, saying why, when restarts keep failing', async () => {
    const ports = { api: await freePort(), pg: await freePort(), temporal: await freePort(), ui: await freePort() };
    const env = childEnv({
      DATA_DIR: path.join(dir, 'data'),
      HOST: '127.0.0.1',
      PORT: String(ports.api),
      PUBLIC_BASE_URL: `http://127.0.0.1:${ports.api}`,
      EMBEDDED_POSTGRES_PORT: String(ports.pg),
      TEMPORAL_DEV_PORT: String(ports.temporal),
      TEMPORAL_DEV_UI_PORT: String(ports.ui),
      LOG_LEVEL: 'warn',
      ...Object.fromEntries(
        ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'SECRETS_KEY', 'BLOB_DIR', 'BUILD_DIR', 'TEMPORAL_TASK_QUEUE'].map((k) => [
          k,
          undefined,
        ]),
      ),
    });
    const s = (started = new Started(env));
    await s.waitFor(/api and worker ready/, 5 * 60_000);
    const launcher = s.proc.pid!;
    const api = pidOf(launcher, /dist\/src\/api\/main\.js/);
    const worker = pidOf(launcher, /dist\/src\/worker\/main\.js/);
    // The api and the worker run on the pinned Node of tools/obtain-node.sh; user code keeps the Node that ran npm start.
    for (const pid of [api, worker])
      expect(fs.readlinkSync(`/proc/${pid}/exe`)).to.match(/node-v24\.\d+\.\d+\/bin\/node$/);
    expect(fs.readFileSync(`/proc/${worker}/environ`, 'utf8').split('\0')).to.include(
      `NODEJS_RUNTIME=${process.execPath}`,
    );
    const pgDir = path.join(dir, 'data', 'postgres');
    const pgUrl = embeddedPostgresUrl(ports.pg, embeddedPassword(pgDir)!);
    const postmaster = () => Number(fs.readFileSync(path.join(pgDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    const query = async (sql: string) => {
      const c = new Client({ connectionString: pgUrl });
      await c.connect();
      try {
        return (await c.query(sql)).rows;
      } finally {
        await c.end();
      }
    };
    const ready = async () =>
      (await fetch(`http://127.0.0.1:${ports.api}/ready`).catch(() => undefined))?.status === 200;
    const temporalAddress = `127.0.0.1:${ports.temporal}`;

    // Data each dependency must still have after its restart: a row, and a workflow execution.
    await query(`CREATE TABLE restart_marker (n int); INSERT INTO restart_marker VALUES (7)`);
    const workflowId = `restart-marker-${Date.now()}`;
    {
      const connection = await Connection.connect({ address: temporalAddress });
      await new TemporalClient({ connection }).workflow.start('NoSuchWorkflow', {
        taskQueue: 'nobody-polls-this',
        workflowId,
      });
      await connection.close();
    }

    // 1. SIGKILL of the postmaster.
    let mark = s.output.length;
    const firstPostmaster = postmaster();
    process.kill(firstPostmaster, 'SIGKILL');
    await s.waitFor(/PostgreSQL is back/, 120_000, mark);
    expect(s.output.slice(mark)).to.match(/PostgreSQL killed by SIGKILL: restarting it in place/);
    const pgBackAt = Date.now();
    expect(postmaster()).to.not.equal(firstPostmaster);
    expect(await query('SELECT n FROM restart_marker')).to.deep.equal([{ n: 7 }]); // same port, same data
    await until('/ready after the PostgreSQL restart', 60_000, async () => ((await ready()) ? true : undefined), 200);

    // 2. SIGKILL of the Temporal dev server.
    mark = s.output.length;
    const firstTemporal = pidOf(launcher, /temporal.* server start-dev/);
    process.kill(firstTemporal, 'SIGKILL');
    await s.waitFor(/The Temporal dev server is back/, 120_000, mark);
    expect(s.output.slice(mark)).to.match(/The Temporal dev server killed by SIGKILL: restarting it in place/);
    expect(pidOf(launcher, /temporal.* server start-dev/)).to.not.equal(firstTemporal);
    {
      const connection = await Connection.connect({ address: temporalAddress });
      const described = await new TemporalClient({ connection }).workflow.getHandle(workflowId).describe();
      expect(described.type).to.equal('NoSuchWorkflow'); // same port, same SQLite file
      await connection.close();
    }
    await until('/ready after the Temporal restart', 60_000, async () => ((await ready()) ? true : undefined), 200);

    // The api and the worker rode both out: the same processes.
    expect(pidOf(launcher, /dist\/src\/api\/main\.js/)).to.equal(api);
    expect(pidOf(launcher, /dist\/src\/worker\/main\.js/)).to.equal(worker);
    expect(s.output).to.not.match(/stopping everything/);

    // 3. PostgreSQL killed with a configuration it cannot start with: the bounded restarts fail, all stops. (Once
    //    it has been up RESTART_POLICY.stableMs since its restart: a crash sooner would continue that series.)
    await sleep(pgBackAt + RESTART_POLICY.stableMs - Date.now());
    mark = s.output.length;
    fs.appendFileSync(path.join(pgDir, 'postgresql.conf'), '\nthis is not a setting\n');
    const children = descendantsOf(launcher).map((p) => p.pid);
    process.kill(postmaster(), 'SIGKILL');
    const code = await Promise.race([s.exited, sleep(180_000).then(() => 'still running')]);
    const said = s.output.slice(mark);
    expect(code, said).to.equal(1);
    const reasons = said.split('\n').filter((l) => l.includes('!!!'));
    expect(reasons, said).to.have.lengthOf(1);
    console.log(`      the supervisor said: ${reasons[0].replace(/^\S+\s+/, '')}`);
    expect(reasons[0]).to.match(
      new RegExp(
        `PostgreSQL killed by SIGKILL and could not be restarted: ${RESTART_POLICY.attempts} attempts in a row failed \\(last: PostgreSQL did not start.*\\); stopping everything`,
      ),
    );
    expect(said.match(/restarting it in place/g)).to.have.lengthOf(RESTART_POLICY.attempts);
    for (const pid of children) expect(pidAlive(pid), `pid ${pid} after the stop`).to.equal(false);
  });
});
