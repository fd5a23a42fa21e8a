// A backup restored as docs/production.md#backups tells an operator: the database with pg_dump (custom format)
// while the platform serves, the blob store's files copied, the secrets key kept apart; then pg_restore into a
// new database and a new api process (dist/src/api/main.js, as `npm run api`) on it, the copied blobs and the
// key. The restored api answers the same run, logs, events and asset bytes through the public API, and the
// restored secret opens with the kept key (and with no other).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { Client as PgClient } from 'pg';
import { childEnv } from '../../src/config';
import { postgresBinaries } from '../../src/cli/postgres/binaries';
import { API_MAIN } from '../../src/cli/start/paths';
import { SecretBox } from '../../src/security/secret-box';
import { structureWithBuild } from '../harness/builds';
import { as, request } from '../harness/client';
import { uploadText } from '../harness/knowledge-bases';
import { freePort } from '../harness/ports';
import { ECHO_PROGRAM, waitForRun } from '../harness/runs';
import { getStack, newTenant } from '../harness/stack';

const RESTORED = 'tarmac_restored';

describe('backup and restore (pg_dump, the blob files, the secrets key)', function () {
  this.timeout(300_000);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tarmac-backup-'));
  let api: ChildProcess | undefined;

  after(async () => {
    api?.kill('SIGKILL');
    await getStack().ds.query(`DROP DATABASE IF EXISTS ${RESTORED} WITH (FORCE)`);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('restores into a new database and api that answer the same, with secrets the kept key opens', async () => {
    const s = getStack();
    const t = await newTenant('backup');
    const client = as(t.key);
    const st = await structureWithBuild(t.organizationId, { files: { 'structure.py': ECHO_PROGRAM } });
    const created = await client.post(`/api/structures/${st.structureId}/runs`, { args: ['kept'] });
    const runId = created.body.structure_run_id as string;
    await waitForRun(t.key, runId);
    const bucket = await client.post('/api/buckets', { name: 'kept' });
    await uploadText(client, bucket.body.bucket_id, 'notes.txt', 'what the backup must keep\n');
    const secret = await client.post('/api/secrets', { name: 'KEPT', value: 'the value' });
    expect(secret.status, secret.text).to.equal(201);
    const reads = [
      `/api/structure-runs/${runId}`,
      `/api/structure-runs/${runId}/logs`,
      `/api/structure-runs/${runId}/events`,
      `/api/buckets/${bucket.body.bucket_id}/assets/notes.txt`,
      '/api/secrets',
    ];
    const before = await Promise.all(reads.map((p) => client.get(p)));

    // The backup, while the platform serves.
    const { binDir } = postgresBinaries(s.config);
    const url = (s.ds.options as { url: string }).url;
    const dump = path.join(dir, 'tarmac.dump');
    execFileSync(path.join(binDir, 'pg_dump'), ['--format=custom', '--no-owner', '--file', dump, url]);
    const blobs = path.join(dir, 'blobs');
    fs.cpSync(s.config.blobDir, blobs, { recursive: true });
    const key = s.config.secretsKey!;

    // The restore: a new database, a new api on it.
    await s.ds.query(`CREATE DATABASE ${RESTORED}`);
    const restoredUrl = Object.assign(new URL(url), { pathname: `/${RESTORED}` }).toString();
    execFileSync(path.join(binDir, 'pg_restore'), ['--no-owner', '--exit-on-error', '--dbname', restoredUrl, dump]);
    const port = await freePort();
    const log = fs.openSync(path.join(dir, 'api.log'), 'a');
    api = spawn(process.execPath, [API_MAIN], {
      stdio: ['ignore', log, log],
      env: childEnv({
        DATABASE_URL: restoredUrl,
        BLOB_DIR: blobs,
        SECRETS_KEY: key.toString('base64'),
        TEMPORAL_ADDRESS: s.env.address,
        HOST: '127.0.0.1',
        PORT: String(port),
        PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
        DATA_DIR: path.join(dir, 'data'),
      }),
    });
    const baseUrl = `http://127.0.0.1:${port}`;
    for (let deadline = Date.now() + 60_000; ; await new Promise((r) => setTimeout(r, 250))) {
      const ready = await request('GET', `${baseUrl}/ready`).catch(() => undefined);
      if (ready?.status === 200) break;
      if (Date.now() > deadline)
        throw new Error(`the restored api is not ready: ${fs.readFileSync(path.join(dir, 'api.log'), 'utf8')}`);
    }

    const restored = as(t.key, baseUrl);
    const after = await Promise.all(reads.map((p) => restored.get(p)));
    for (const [i, p] of reads.entries()) {
      expect(after[i].status, `${p}: ${after[i].text}`).to.equal(200);
      expect(after[i].body, p).to.deep.equal(before[i].body);
    }
    const asset = await restored.post(`/api/buckets/${bucket.body.bucket_id}/asset-urls/notes.txt`, {
      operation: 'GET',
    });
    expect(asset.body.url.startsWith(baseUrl), asset.text).to.equal(true);
    expect((await request('GET', asset.body.url)).text).to.equal('what the backup must keep\n');

    // The restored secret opens with the kept key, and with no other.
    const db = new PgClient({ connectionString: restoredUrl });
    await db.connect();
    try {
      const { rows } = await db.query(`SELECT value_encrypted FROM secrets WHERE secret_id = $1`, [
        secret.body.secret_id,
      ]);
      expect(new SecretBox(key).open(rows[0].value_encrypted, secret.body.secret_id)).to.equal('the value');
      const other = new SecretBox(randomBytes(32));
      expect(() => other.open(rows[0].value_encrypted, secret.body.secret_id)).to.throw();
    } finally {
      await db.end();
    }
  });
});
