// Telling an unreachable database from a wrong query (the api answers the first 503), and writes that wait it
// out (found by the pg-outage drill: log lines were dropped after six seconds of retries, and a process whose
// RUNNING write failed was stopped: its retry would have run the code twice).
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { Run } from '../../src/persistence/entities';
import { isUnavailable, retryWhileUnavailable } from '../../src/persistence/unavailable';
import { markRunning, markStarting } from '../../src/services/runs/lifecycle';
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
