// Nothing lost silently when the disk is full (issue 30): PostgreSQL's disk_full (53100) answers 503 with
// Retry-After; a run whose log lines the database refuses keeps them until it takes them, or records what it
// lost; below the free-space watermark new runs and uploads are refused (503 naming the disk) and /ready says so.
// The full disk is the real server's error: a trigger raises SQLSTATE 53100 for the inserts of one run only.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { loadConfig } from '../../src/config';
import { structureWithBuild } from '../harness/builds';
import { as, request } from '../harness/client';
import { waitForDeployment } from '../fixtures/projects';
import { SLEEP_PROGRAM, waitForRun } from '../harness/runs';
import { getStack, newTenant, startApi } from '../harness/stack';

const DISK_FULL = `could not extend file "base/16384/16400": No space left on device`;

/**
 * Makes inserts into `table` for `runId` fail with 53100, for `seconds` (or until `diskFreed`);
 * `run_events:USER`: only the events the run's code posts.
 */
async function fillDisk(table: 'run_logs' | 'run_events' | 'run_events:USER', runId: string, seconds?: number) {
  await getStack().ds.query(
    `INSERT INTO test_disk_full (run_id, table_name, until) VALUES ($1, $2, clock_timestamp() + $3 * interval '1 second')`,
    [runId, table, seconds ?? null],
  );
}
const diskFreed = (runId: string) => getStack().ds.query(`DELETE FROM test_disk_full WHERE run_id = $1`, [runId]);

/** node:http PUT of a chunked body: the answer is read even when the server stops reading the body early. */
function rawPut(url: string, body: Buffer): Promise<{ status: number; retryAfter?: string; json: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'PUT', headers: { 'transfer-encoding': 'chunked' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        req.destroy();
        const retryAfter = res.headers['retry-after'];
        resolve({ status: res.statusCode!, retryAfter, json: JSON.parse(Buffer.concat(chunks).toString()) });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

const logsOf = async (key: string, runId: string) =>
  (await as(key).get(`/api/structure-runs/${runId}/logs`)).body.logs as string[];
const eventsOf = async (key: string, runId: string) =>
  (await as(key).get(`/api/structure-runs/${runId}/events?limit=1000`)).body.events as Array<{
    type: string;
    origin: string;
    payload: any;
  }>;

/** Waits a second (so that the test can fill the disk for it first), then prints `n` lines and exits 0. */
const PRINTER = `
import sys, time
time.sleep(1.5)
n = int(sys.argv[1])
for i in range(n - 1):
    print("line %d" % i)
print("last line", file=sys.stderr)
`;

describe('out of space', function () {
  this.timeout(90_000);

  before(async () => {
    await getStack().ds.query(`
      CREATE TABLE test_disk_full (run_id uuid NOT NULL, table_name text NOT NULL, until timestamptz);
      CREATE FUNCTION test_disk_full() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF EXISTS (SELECT 1 FROM test_disk_full f WHERE f.run_id = NEW.run_id AND f.table_name = TG_TABLE_NAME
                   AND (f.until IS NULL OR clock_timestamp() < f.until)) THEN
          RAISE EXCEPTION '${DISK_FULL}' USING ERRCODE = 'disk_full';
        END IF;
        RETURN NEW;
      END $$;
      CREATE FUNCTION test_disk_full_events() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF EXISTS (SELECT 1 FROM test_disk_full f WHERE f.run_id = NEW.run_id
                   AND f.table_name IN ('run_events', 'run_events:' || NEW.origin)
                   AND (f.until IS NULL OR clock_timestamp() < f.until)) THEN
          RAISE EXCEPTION '${DISK_FULL}' USING ERRCODE = 'disk_full';
        END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER test_disk_full BEFORE INSERT ON run_logs FOR EACH ROW EXECUTE FUNCTION test_disk_full();
      CREATE TRIGGER test_disk_full BEFORE INSERT ON run_events FOR EACH ROW EXECUTE FUNCTION test_disk_full_events();
    `);
  });

  after(async () => {
    await getStack().ds.query(`
      DROP TRIGGER IF EXISTS test_disk_full ON run_logs;
      DROP TRIGGER IF EXISTS test_disk_full ON run_events;
      DROP FUNCTION IF EXISTS test_disk_full();
      DROP FUNCTION IF EXISTS test_disk_full_events();
      DROP TABLE IF EXISTS test_disk_full;
    `);
  });

  it('answers an event post that meets a full disk 503 with Retry-After, and takes it once there is room', async () => {
    const t = await newTenant();
    const s = await structureWithBuild(t.organizationId, { files: { 'structure.py': SLEEP_PROGRAM } });
    const runId = (await as(t.key).post(`/api/structures/${s.structureId}/runs`, { args: ['30'] })).body
      .structure_run_id;
    await waitForRun(t.key, runId, (r) => r.status === 'RUNNING');
    const event = { type: 'Progress', timestamp: 1700000000, payload: { step: 1 } };
    try {
      await fillDisk('run_events', runId);
      const refused = await as(t.key).post(`/api/structure-runs/${runId}/events`, event);
      expect(refused.status, refused.text).to.equal(503);
      expect(refused.headers.get('retry-after')).to.equal('5');
      expect(refused.body).to.deep.equal({
        type: 'ServiceUnavailableError',
        errors: [{ message: 'The database is out of disk space; retry shortly' }],
      });
      await diskFreed(runId);
      const taken = await as(t.key).post(`/api/structure-runs/${runId}/events`, event);
      expect(taken.status, taken.text).to.be.oneOf([200, 201, 202]);
      expect((await eventsOf(t.key, runId)).filter((e) => e.type === 'Progress')).to.have.length(1);
    } finally {
      await diskFreed(runId);
      await as(t.key).post(`/api/structure-runs/${runId}/cancel`);
    }
  });

  it('the default structure retries its event post on 503 until the database takes it', async () => {
    const t = await newTenant();
    const created = await as(t.key).post('/api/structures', { name: 'default-retries' });
    expect((await waitForDeployment(t.key, created.body.latest_deployment_id)).status).to.equal('SUCCEEDED');
    const runId = (await as(t.key).post(`/api/structures/${created.body.structure_id}/runs`, { args: ['kept'] })).body
      .structure_run_id;
    await fillDisk('run_events:USER', runId, 3);
    const run = await waitForRun(t.key, runId, undefined, 60_000);
    expect(run.status, JSON.stringify(run.status_detail)).to.equal('SUCCEEDED');
    expect(run.output).to.deep.equal({ type: 'TextArtifact', value: 'kept' });
    const logs = await logsOf(t.key, runId);
    expect(logs[0]).to.equal("Hello from the default structure. Arguments: ['kept']");
    // Refused at least once, then retried after Retry-After (5 s).
    expect(logs.slice(1)).to.include('event not posted yet (the platform is unavailable); retrying in 5.0 s');
    expect((await eventsOf(t.key, runId)).filter((e) => e.type === 'FinishStructureRunEvent')).to.have.length(1);
  });

  it('keeps log lines the database refuses for a while and stores every one, in order, once it takes them', async () => {
    const t = await newTenant();
    const s = await structureWithBuild(t.organizationId, { files: { 'structure.py': PRINTER } });
    const runId = (await as(t.key).post(`/api/structures/${s.structureId}/runs`, { args: ['40'] })).body
      .structure_run_id;
    await fillDisk('run_logs', runId, 4);
    const run = await waitForRun(t.key, runId);
    expect(run.status).to.equal('SUCCEEDED');
    expect(run.status_detail).to.deep.equal({ reason: 'Completed', message: null, exit_code: 0 });
    const expected = [...Array.from({ length: 39 }, (_, i) => `line ${i}`), 'last line'];
    expect(await logsOf(t.key, runId)).to.deep.equal(expected);
    expect((await eventsOf(t.key, runId)).map((e) => e.type)).to.not.include('StructureRunOutputLost');
  });

  it('records the log lines it had to give up on the run: status detail, message and a SYSTEM event', async () => {
    const t = await newTenant();
    const s = await structureWithBuild(t.organizationId, { files: { 'structure.py': PRINTER } });
    const runId = (await as(t.key).post(`/api/structures/${s.structureId}/runs`, { args: ['40'] })).body
      .structure_run_id;
    await fillDisk('run_logs', runId); // for good: past RUN_LOG_GRACE_SECONDS (6 s in tests) the lines are lost
    const run = await waitForRun(t.key, runId, undefined, 60_000);
    const reason = `The database did not take the run's log lines (${DISK_FULL}); 40 were lost`;
    expect(run.status).to.equal('SUCCEEDED');
    expect(run.status_detail).to.deep.equal({
      reason: 'Completed',
      message: reason,
      exit_code: 0,
      output_lost: { log_lines: 40, reason },
    });
    expect(await logsOf(t.key, runId)).to.deep.equal([]);
    const events = await eventsOf(t.key, runId);
    expect(events.map((e) => `${e.origin} ${e.type}`).slice(-2)).to.deep.equal([
      'SYSTEM StructureRunOutputLost',
      'SYSTEM StructureRunCompleted',
    ]);
    expect(events.at(-2)!.payload).to.deep.equal({ output_lost: { log_lines: 40, reason } });
    expect(events.at(-1)!.payload.status_detail.output_lost).to.deep.equal({ log_lines: 40, reason });
  });

  it('answers an upload that meets a full blob filesystem (ENOSPC) 503 with Retry-After and keeps nothing of it', async () => {
    const t = await newTenant();
    const stack = getStack();
    // The blob store on a 64 KiB tmpfs, and no watermark: the disk fills faster than the watermark is read.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tarmac-full-blobs-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tarmac-full-blobs', dir]);
    const small = await startApi(stack.env.client, 0, {
      ...stack.config,
      blobDir: dir,
      disk: loadConfig({ DISK_FREE_MIN_MB: '0', DISK_FREE_MIN_PERCENT: '0' }).disk,
    });
    try {
      const bucketId = (await as(t.key).get(`/api/organizations/${t.organizationId}`)).body.default_bucket_id;
      const urlOf = async (name: string) => {
        const url = new URL(
          (await as(t.key).post(`/api/buckets/${bucketId}/asset-urls/${name}`, { operation: 'PUT' })).body.url,
        );
        return `${small.baseUrl}${url.pathname}${url.search}`;
      };
      const full = await rawPut(await urlOf('big.bin'), Buffer.alloc(256 * 1024, 7));
      expect(full.status, JSON.stringify(full.json)).to.equal(503);
      expect(full.retryAfter).to.equal('5');
      expect(full.json).to.deep.equal({
        type: 'ServiceUnavailableError',
        errors: [{ message: 'The blob store is out of disk space; retry shortly' }],
      });
      expect((await as(t.key).get(`/api/buckets/${bucketId}/assets/big.bin`)).status).to.equal(404);
      // The partial file is gone: the room it took is free again, and a small upload fits.
      const files = fs.readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
      expect(files.map((f) => f.name)).to.deep.equal([]);
      const fits = await rawPut(await urlOf('small.bin'), Buffer.alloc(1000, 7));
      expect(fits.status, JSON.stringify(fits.json)).to.equal(200);
      expect(fits.json.size).to.equal(1000);
    } finally {
      await small.close();
      execFileSync('umount', [dir]);
      fs.rmdirSync(dir);
    }
  });

  it('refuses new runs and uploads below the free-space watermark (503 naming the disk), and /ready says so', async () => {
    const t = await newTenant();
    const s = await structureWithBuild(t.organizationId, { files: { 'structure.py': SLEEP_PROGRAM } });
    const stack = getStack();
    // A dedicated api process whose watermark is above the free space of this machine's disk (1 PiB).
    const low = await startApi(stack.env.client, 0, {
      ...stack.config,
      disk: loadConfig({ DISK_FREE_MIN_MB: String(1024 ** 3) }).disk,
    });
    try {
      const onLow = as(t.key, low.baseUrl);
      const refused = await onLow.post(`/api/structures/${s.structureId}/runs`, { args: ['1'] });
      expect(refused.status, refused.text).to.equal(503);
      expect(refused.headers.get('retry-after')).to.equal('5');
      expect(refused.body.type).to.equal('ServiceUnavailableError');
      expect(refused.body.errors[0].message).to.match(
        /^Low disk space: the data directory's filesystem \(.+\) has \d+ MiB free, below the watermark \(DISK_FREE_MIN_MB=1073741824, DISK_FREE_MIN_PERCENT=0\); new runs, jobs and uploads are refused until space is freed$/,
      );
      expect(refused.body.errors[0].message).to.contain(stack.config.dataDir);

      // An upload through a presigned URL is refused before its body is read.
      const bucketId = (await as(t.key).get(`/api/organizations/${t.organizationId}`)).body.default_bucket_id;
      const put = await as(t.key).post(`/api/buckets/${bucketId}/asset-urls/low/disk.txt`, { operation: 'PUT' });
      const url = new URL(put.body.url);
      const upload = await request('PUT', `${low.baseUrl}${url.pathname}${url.search}`, undefined, { raw: 'bytes' });
      expect(upload.status, upload.text).to.equal(503);
      expect(upload.headers.get('retry-after')).to.equal('5');
      expect(upload.body.errors[0].message).to.match(/^Low disk space/);
      expect((await as(t.key).get(`/api/buckets/${bucketId}/assets/low/disk.txt`)).status).to.equal(404);

      const ready = await fetch(`${low.baseUrl}/ready`);
      expect(ready.status).to.equal(503);
      expect(ready.headers.get('retry-after')).to.equal('5');
      const readyBody = (await ready.json()) as { type: string; errors: Array<{ message: string }> };
      expect(readyBody.type).to.equal('ServiceUnavailableError');
      expect(readyBody.errors.map((e) => e.message)).to.have.length(1);
      expect(readyBody.errors[0].message).to.match(/^disk: Low disk space: the data directory's filesystem/);

      const metrics = await (await fetch(`${low.baseUrl}/metrics`)).text();
      expect(metrics).to.match(/^tarmac_disk_admitting 0$/m);
      const free = /^tarmac_disk_free_bytes\{filesystem="data"\} (\d+)$/m.exec(metrics);
      expect(Number(free?.[1])).to.be.greaterThan(0);
      expect(metrics).to.match(/^tarmac_disk_free_bytes\{filesystem="blobs"\} \d+$/m);

      // What is already running goes on: a run created on the other api posts its events through this one.
      const runId = (await as(t.key).post(`/api/structures/${s.structureId}/runs`, { args: ['30'] })).body
        .structure_run_id;
      await waitForRun(t.key, runId, (r) => r.status === 'RUNNING');
      const posted = await onLow.post(`/api/structure-runs/${runId}/events`, {
        type: 'Progress',
        timestamp: 1700000000,
        payload: {},
      });
      expect(posted.status, posted.text).to.be.oneOf([200, 201, 202]);
      expect((await onLow.post(`/api/structure-runs/${runId}/cancel`)).status).to.equal(200);
    } finally {
      await low.close();
    }
    // The stack's own api (default watermark) admits, and says so.
    const ready = await fetch(`${stack.baseUrl}/ready`);
    expect(ready.status).to.equal(200);
    expect(((await ready.json()) as { checks: Record<string, string> }).checks).to.deep.include({ disk: 'ok' });
  });
});
