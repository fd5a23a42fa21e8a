// The launcher of the local PostgreSQL (npm start, the test stack, the drills) on the real pinned binaries:
// a new data directory is set up as the server needs and no one else may read; the server listens on
// localhost only, with passwords; a crash is reported; a data directory it cannot open is left as it was.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { Client } from 'pg';
import { passwordFileOf, RunningPostgres, startEmbeddedPostgres } from '../../src/cli/postgres/embedded-postgres';
import { POSTGRES_OS_USER, postgresOsUser } from '../../src/cli/postgres/os-user';
import { freePort, getStack } from '../harness/stack';

const postmasterPid = (dir: string) => Number(fs.readFileSync(path.join(dir, 'postmaster.pid'), 'utf8').split('\n')[0]);

describe('local PostgreSQL launcher', () => {
  let root: string;
  const started: RunningPostgres[] = [];
  const start = async (dir: string, persistent = true) => {
    const pg = await startEmbeddedPostgres({
      dir,
      port: await freePort(),
      database: 'launcher',
      persistent,
      config: getStack().config,
    });
    started.push(pg);
    return pg;
  };
  const query = async (url: string, sql: string) => {
    const client = new Client(url);
    await client.connect();
    try {
      return (await client.query(sql)).rows;
    } finally {
      await client.end();
    }
  };

  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'tarmac-launcher-'));
    fs.chmodSync(root, 0o755); // as root, the server's own user must reach it
  });
  afterEach(async () => {
    for (const pg of started.splice(0)) await pg.stop().catch(() => undefined);
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('initialises a private data directory, listens on localhost only with scram-sha-256, and opens it again', async () => {
    const dir = path.join(root, 'postgres');
    const pg = await start(dir);
    const st = fs.statSync(dir);
    expect(st.mode & 0o777).to.equal(0o700);
    expect(st.uid).to.equal(postgresOsUser()?.uid ?? process.getuid!());
    expect(fs.statSync(passwordFileOf(dir)).mode & 0o777).to.equal(0o600);
    const [settings] = await query(
      pg.url,
      `SELECT current_setting('listen_addresses') AS listen, current_setting('unix_socket_directories') AS sockets, current_user AS who`,
    );
    expect(settings).to.deep.equal({ listen: 'localhost', sockets: '', who: 'tarmac' });
    const methods = await query(pg.url, `SELECT DISTINCT auth_method FROM pg_hba_file_rules`);
    expect(methods.map((r) => r.auth_method)).to.deep.equal(['scram-sha-256']);
    if (process.getuid?.() === 0) {
      // PostgreSQL refuses root: it runs as its own system user.
      expect(fs.readFileSync(`/proc/${postmasterPid(dir)}/status`, 'utf8')).to.match(
        new RegExp(`^Uid:\\s+${postgresOsUser()!.uid}\\s`, 'm'),
      );
      expect(POSTGRES_OS_USER).to.equal('tarmac-postgres');
    }
    await query(pg.url, `CREATE TABLE kept (n int); INSERT INTO kept VALUES (42)`);
    const wrong = new URL(pg.url);
    wrong.password = 'not-the-password';
    expect(await query(wrong.toString(), 'SELECT 1').catch((e: Error) => e.message)).to.match(
      /password authentication failed/,
    );

    await pg.stop();
    const again = await start(dir);
    expect(new URL(again.url).password).to.equal(new URL(pg.url).password); // the generated one, kept
    expect(await query(again.url, 'SELECT n FROM kept')).to.deep.equal([{ n: 42 }]);
  });

  it('reports a server that exits without being stopped', async () => {
    const dir = path.join(root, 'postgres');
    const pg = await start(dir, false);
    const exit = new Promise<NodeJS.Signals | null>((resolve) =>
      pg.onUnexpectedExit((_code, signal) => resolve(signal)),
    );
    process.kill(postmasterPid(dir), 'SIGKILL');
    expect(await exit).to.equal('SIGKILL');
  });

  it('leaves a data directory of another major version as it was and says what to do', async () => {
    const dir = path.join(root, 'postgres');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'PG_VERSION'), '16\n');
    const err = await start(dir).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).to.match(
      /holds a PostgreSQL 16 database; the local server is PostgreSQL 18\.\d+, which cannot open it\. Nothing was changed\./,
    );
    expect(err?.message)
      .to.contain('EMBEDDED_POSTGRES_BIN_DIR')
      .and.contain('pg_upgrade')
      .and.contain(`move ${dir} and ${passwordFileOf(dir)} aside`);
    expect(fs.readdirSync(dir)).to.deep.equal(['PG_VERSION']);
    expect(fs.existsSync(passwordFileOf(dir))).to.equal(false);
  });
});
