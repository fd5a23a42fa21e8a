// The terminal write of knowledge base jobs, data jobs and deliveries (src/jobs/finish.ts) on a real
// PostgreSQL: the ending's words go into status_detail (only the members it has) and its counts into their
// columns, a delivery keeps the detail it had (and drops its kept request), a job that ended keeps its end
// whatever a later ending says, and a job with no row answers MISSING.
import { expect } from 'chai';
import { finishJob } from '../../../src/jobs/finish';
import { DATA_JOB, INTEGRATION_DELIVERY, KNOWLEDGE_BASE_JOB } from '../../../src/jobs/kinds';
import { databaseWithOrganization, dropDatabaseWithOrganization, insertJob, jobRow } from '../../harness/job-rows';
import type { TestDatabase } from '../../harness/postgres';

describe('jobs: finishJob', () => {
  let db: TestDatabase;
  let org: string;
  before(async () => ({ db, org } = await databaseWithOrganization()));
  after(() => dropDatabaseWithOrganization(db, org));

  it("writes the ending's words in status_detail and its counts in their columns", async () => {
    const id = await insertJob(db.ds, DATA_JOB, org, 'RUNNING');
    const status = await finishJob(db.ds, DATA_JOB, id, {
      status: 'FAILED',
      reason: 'SourceUnreachable',
      message: 'the site answered 503',
      stats: { pages: 3 },
      knowledgeBaseJobIds: ['3f1d0c52-6a5e-4a8e-9d0b-5a4f7c1e2b90'],
      errors: [{ type: 'FetchError', message: 'page 4: 503', path: '/4' }],
      bytesIngested: 1234,
    });
    expect(status).to.equal('FAILED');
    const row = await jobRow(db.ds, DATA_JOB, id);
    expect(row?.status_detail).to.deep.equal({
      reason: 'SourceUnreachable',
      message: 'the site answered 503',
      stats: { pages: 3 },
      knowledge_base_job_ids: ['3f1d0c52-6a5e-4a8e-9d0b-5a4f7c1e2b90'],
    });
    expect(row?.errors).to.deep.equal([{ type: 'FetchError', message: 'page 4: 503', path: '/4' }]);
    expect(Number(row?.bytes_ingested)).to.equal(1234);
    expect(row?.completed_at).to.be.instanceOf(Date);
  });

  it('writes only the members an ending has: who cancelled, and nothing else', async () => {
    const id = await insertJob(db.ds, KNOWLEDGE_BASE_JOB, org, 'RUNNING', { bytes_ingested: 9 });
    expect(await finishJob(db.ds, KNOWLEDGE_BASE_JOB, id, { status: 'CANCELLED', requestedBy: 'user-1' })).to.equal(
      'CANCELLED',
    );
    const row = await jobRow(db.ds, KNOWLEDGE_BASE_JOB, id);
    expect(row?.status_detail).to.deep.equal({ requested_by: 'user-1' });
    expect([Number(row?.bytes_ingested), row?.errors], 'counts not given are left as they were').to.deep.equal([9, []]);
  });

  it('ends a job still QUEUED (cancelled before it started)', async () => {
    const id = await insertJob(db.ds, DATA_JOB, org);
    expect(await finishJob(db.ds, DATA_JOB, id, { status: 'CANCELLED', reason: 'Cancelled' })).to.equal('CANCELLED');
  });

  it('keeps the detail a delivery had (the runs it started), adds the ending to it, and drops its request', async () => {
    const started = { structure_runs: ['r-1', 'r-2'], reason: 'Running' };
    const id = await insertJob(db.ds, INTEGRATION_DELIVERY, org, 'RUNNING', {
      status_detail: started,
      payload: { text: 'hello' },
    });
    expect(
      await finishJob(db.ds, INTEGRATION_DELIVERY, id, { status: 'SUCCEEDED', reason: 'Answered', message: 'posted' }),
    ).to.equal('SUCCEEDED');
    const row = await jobRow(db.ds, INTEGRATION_DELIVERY, id);
    expect(row?.status_detail, "the ending's words win over the kept ones").to.deep.equal({
      structure_runs: ['r-1', 'r-2'],
      reason: 'Answered',
      message: 'posted',
    });
    expect(row?.payload).to.equal(null);
    expect(row?.completed_at).to.be.instanceOf(Date);
  });

  it('leaves a data job without a kept detail: its detail is the ending alone', async () => {
    const id = await insertJob(db.ds, DATA_JOB, org, 'RUNNING', { status_detail: { progress: { done: 1 } } });
    await finishJob(db.ds, DATA_JOB, id, { status: 'SUCCEEDED', reason: 'Done' });
    expect((await jobRow(db.ds, DATA_JOB, id))?.status_detail).to.deep.equal({ reason: 'Done' });
  });

  it('keeps the end of a job that ended already: answers it and writes nothing', async () => {
    const id = await insertJob(db.ds, KNOWLEDGE_BASE_JOB, org, 'RUNNING');
    await finishJob(db.ds, KNOWLEDGE_BASE_JOB, id, { status: 'SUCCEEDED', reason: 'Ingested', bytesIngested: 5 });
    const ended = await jobRow(db.ds, KNOWLEDGE_BASE_JOB, id);
    const again = await finishJob(db.ds, KNOWLEDGE_BASE_JOB, id, {
      status: 'FAILED',
      reason: 'Late',
      bytesIngested: 99,
    });
    expect(again).to.equal('SUCCEEDED');
    expect(await jobRow(db.ds, KNOWLEDGE_BASE_JOB, id)).to.deep.equal(ended);
  });

  it('answers MISSING for a job with no row', async () => {
    const missing = '00000000-0000-4000-8000-000000000000';
    for (const kind of [DATA_JOB, KNOWLEDGE_BASE_JOB, INTEGRATION_DELIVERY])
      expect(await finishJob(db.ds, kind, missing, { status: 'SUCCEEDED' }), kind.name).to.equal('MISSING');
  });
});
