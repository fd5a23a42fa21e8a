// Telling an unreachable database from a wrong query (the api answers the first 503), and writes that wait it
// out (found by the pg-outage drill: log lines were dropped after six seconds of retries, and a process whose
// RUNNING write failed was stopped: its retry would have run the code twice).
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { Run } from '../../src/persistence/entities';
import fs from 'node:fs';
import { Client, DatabaseError } from 'pg';
import { isUnavailable, retryWhileUnavailable, unavailableReason } from '../../src/persistence/unavailable';
import { markRunning, markStarting } from '../../src/services/code/runs/lifecycle';
import { structureWithBuild } from '../support/builds';
import { getStack, newTenant } from '../support/stack';
import { aRun } from '../support/runs';

const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

describe('database unavailable', () => {
  it('tells connection failures from wrong queries', async () => {
    expect(isUnavailable(refused())).to.equal(true);
    expect(
      isUnavailable(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' })),
    ).to.equal(true);
    expect(isUnavailable(new Error('x', { cause: refused() }))).to.equal(true);
    const wrong = await getStack()
      .ds.query('SELECT * FROM no_such_table')
      .catch((e: unknown) => e);
    expect(isUnavailable(wrong)).to.equal(false);
    // A transaction whose connection the server terminated (the api answered 500 to it during the drill).
    const runner = getStack().ds.createQueryRunner();
    await runner.connect();
    await runner.startTransaction();
    const [{ pid }] = await runner.query('SELECT pg_backend_pid() AS pid');
    await getStack().ds.query('SELECT pg_terminate_backend($1)', [pid]);
    const lost = await runner.query('SELECT 1').catch((e: unknown) => e);
    // TypeORM releases the runner when the connection reports its error.
    for (let i = 0; i < 200 && !runner.isReleased; i++) await new Promise((r) => setTimeout(r, 10));
    const next = await runner.manager.query('SELECT 1').catch((e: unknown) => e);
    const commit = await runner.commitTransaction().catch((e: unknown) => e);
    await runner.release();
    expect(isUnavailable(lost), String(lost)).to.equal(true);
    expect(next).to.have.property('name', 'QueryRunnerProviderAlreadyReleasedError');
    expect(isUnavailable(next)).to.equal(true);
    expect(commit).to.have.property('name', 'QueryRunnerAlreadyReleasedError');
    expect(isUnavailable(commit)).to.equal(true);
  });

  it('takes out-of-resources errors (PostgreSQL class 53, a full filesystem) as unavailability, naming the cause', async () => {
    const { ds } = getStack();
    const raised = (code: string) =>
      ds
        .query(`DO $$ BEGIN RAISE EXCEPTION 'raised %', '${code}' USING ERRCODE = '${code}'; END $$`)
        .catch((e: unknown) => e);
    const reasons: Record<string, string | undefined> = {};
    for (const code of ['53000', '53100', '53200', '53300', '53400', '57P01', '22012', '42P01', 'P0001'])
      reasons[code] = unavailableReason(await raised(code));
    expect(reasons).to.deep.equal({
      '53000': 'The database is out of resources; retry shortly',
      '53100': 'The database is out of disk space; retry shortly',
      '53200': 'The database is out of memory; retry shortly',
      '53300': 'The database has too many connections; retry shortly',
      '53400': 'The database reached a configured limit; retry shortly',
      '57P01': 'A backing service is unavailable; retry shortly',
      '22012': undefined,
      '42P01': undefined,
      P0001: undefined,
    });
    // The driver's own DatabaseError (no TypeORM wrapper), as a pooled client sees it.
    const url = (ds.options as { url: string }).url;
    const client = new Client({ connectionString: url });
    await client.connect();
    const diskFull = await client
      .query(`DO $$ BEGIN RAISE EXCEPTION 'could not extend file' USING ERRCODE = 'disk_full'; END $$`)
      .catch((e: unknown) => e);
    await client.end();
    expect(diskFull).to.be.instanceOf(DatabaseError).and.have.property('code', '53100');
    expect(isUnavailable(diskFull)).to.equal(true);
    // The server's own 53300: a role past its connection limit.
    const role = `full_${randomUUID().slice(0, 8)}`;
    await ds.query(`CREATE ROLE ${role} LOGIN PASSWORD 'limited' CONNECTION LIMIT 0`);
    try {
      const limited = new URL(url);
      limited.username = role;
      limited.password = 'limited';
      const refused = await new Client({ connectionString: limited.toString() }).connect().catch((e: unknown) => e);
      expect(refused).to.have.property('code', '53300');
      expect(unavailableReason(refused)).to.equal('The database has too many connections; retry shortly');
    } finally {
      await ds.query(`DROP ROLE ${role}`);
    }
    // A full filesystem (the blob store's): /dev/full answers every write with ENOSPC.
    let enospc: unknown;
    try {
      fs.writeFileSync('/dev/full', 'x');
    } catch (err) {
      enospc = err;
    }
    expect(enospc).to.have.property('code', 'ENOSPC');
    expect(unavailableReason(enospc)).to.equal('The blob store is out of disk space; retry shortly');
    expect(unavailableReason(new Error('wrapped', { cause: enospc }))).to.equal(
      'The blob store is out of disk space; retry shortly',
    );
    expect(isUnavailable(Object.assign(new Error('x'), { code: 'toString' }))).to.equal(false);
  });

  it('retries while the database is unreachable, not otherwise, and gives up after its limit', async () => {
    let calls = 0;
    const value = await retryWhileUnavailable(async () => {
      if (++calls < 3) throw refused();
      return 'written';
    });
    expect([value, calls]).to.deep.equal(['written', 3]);

    calls = 0;
    const wrong = await retryWhileUnavailable(async () => {
      calls++;
      throw new Error('syntax error');
    }).catch((e: Error) => e.message);
    expect([wrong, calls]).to.deep.equal(['syntax error', 1]);

    calls = 0;
    const gaveUp = await retryWhileUnavailable(async () => {
      calls++;
      throw refused();
    }, 500).catch((e: Error) => e.message);
    expect(gaveUp).to.match(/ECONNREFUSED/);
    expect(calls).to.be.within(2, 3);
  });

  it('marks a run RUNNING repeatably: a retry with the same start time is a success, another start is not', async () => {
    const { ds } = getStack();
    const t = await newTenant();
    const s = await structureWithBuild(t.organizationId, { files: { 'structure.py': '' } });
    const now = new Date();
    const runId = randomUUID();
    await ds.getRepository(Run).save(
      aRun(
        {
          run_id: runId,
          kind: 'structure',
          organization_id: t.organizationId,
          resource_id: s.structureId,
          deployment_id: s.deploymentId,
          created_by: t.userId,
        },
        now,
      ),
    );
    expect(await markStarting(ds, runId)).to.equal('STARTING');
    const startedAt = new Date();
    expect(await markRunning(ds, runId, startedAt)).to.equal(true);
    expect(await markRunning(ds, runId, new Date(startedAt.getTime()))).to.equal(true);
    expect(await markRunning(ds, runId, new Date(startedAt.getTime() + 1))).to.equal(false);
    const events: Array<{ type: string }> = await ds.query(
      `SELECT type FROM run_events WHERE run_id = $1 ORDER BY seq`,
      [runId],
    );
    expect(events.map((e) => e.type)).to.deep.equal(['StructureRunStarting', 'StructureRunRunning']);
  });
});
