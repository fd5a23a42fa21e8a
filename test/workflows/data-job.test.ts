// The data job workflow's own guarantees: the time limit is a workflow timer (proved with time skipping while
// the ingest activity waits on a page that never answers), the api's cancel and a Temporal workflow
// cancellation (the UI's cancel) both end the job CANCELLED and close the outside request, a source that
// cannot list ends the job FAILED with its reason, a retried ingest (the worker lost mid-job) duplicates
// nothing in the lake nor any structure run, a data_lake job over several batches of rows writes each item
// once with its bytes (and a re-run reads none), and the reconciler settles a job whose workflow is gone.
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { assetBlobKey } from '../../src/blobs/keys';
import { expect } from 'chai';
import { Asset, DataConnector, DataJob, Run } from '../../src/persistence/entities';
import { ingestDataJob } from '../../src/services/data-connectors/ingest';
import { cancelDataJob, startDataJob } from '../../src/services/data-connectors/jobs';
import { workflowIdOf } from '../../src/temporal/workflow-start';
import { structureWithBuild, structureWithoutBuild } from '../harness/builds';
import { as } from '../harness/client';
import { startLocalSite, type LocalSite } from '../harness/local-site';
import { PY_PRELUDE } from '../harness/runs';
import { getStack, newTenant, startTimeSkipping } from '../harness/stack';
import { skipWhileActivityRuns } from '../support/time-skipping';
import { ownerCaller } from '../harness/people';

type Tenant = Awaited<ReturnType<typeof newTenant>>;

/** A connector of `type` writing to the tenant's default bucket; a new tenant unless one is given. */
async function tenantWithConnector(
  config: Record<string, unknown>,
  type: string,
  extra: Partial<DataConnector> = {},
  tenant?: Tenant,
) {
  const t = tenant ?? (await newTenant('data-job'));
  const { ds } = getStack();
  const org = await ds.query(`SELECT default_bucket_id FROM organizations WHERE organization_id = $1`, [
    t.organizationId,
  ]);
  const now = new Date();
  // The row alone (no first job): each test starts the job the way it needs.
  const connector = await ds.getRepository(DataConnector).save({
    data_connector_id: randomUUID(),
    organization_id: t.organizationId,
    name: 'c',
    description: null,
    type,
    config: { [type]: config },
    bucket_id: org[0].default_bucket_id,
    schedule_expression: null,
    transforms: [],
    created_by: t.userId,
    created_at: now,
    updated_at: now,
    ...extra,
  });
  const caller = ownerCaller(t);
  return { t, connector, caller };
}

/** A job row of `connector` already RUNNING (as its workflow's start leaves it), created `at`. */
function runningDataJob(connector: DataConnector, at = new Date()): Promise<DataJob> {
  return getStack().ds.getRepository(DataJob).save({
    data_job_id: randomUUID(),
    data_connector_id: connector.data_connector_id,
    organization_id: connector.organization_id,
    status: 'RUNNING',
    status_detail: null,
    errors: [],
    bytes_ingested: 0,
    created_by: 'test',
    created_at: at,
    updated_at: at,
    completed_at: null,
  });
}

async function untilRequested(site: LocalSite, path: string) {
  for (let i = 0; i < 400 && !site.requests.some((r) => r.path === path); i++)
    await new Promise((r) => setTimeout(r, 50));
  expect(site.requests.map((r) => r.path)).to.include(path);
}

describe('data job workflow', function () {
  this.timeout(120_000);
  let site: LocalSite;

  before(async () => {
    site = await startLocalSite({ '/robots.txt': ['text/plain', ''] });
  });
  after(() => site.close());

  it('ends a job past its time limit FAILED, by the workflow timer, without waiting for it', async () => {
    const { ds, config } = getStack();
    site.hanging.add('/slow-limit');
    const { connector, caller } = await tenantWithConnector({ urls: [`${site.url}/slow-limit`] }, 'webscraper');
    const ts = await startTimeSkipping();
    try {
      await ts.runWorker(async () => {
        // Heartbeat timeouts count skipped server time: it must outlast the skip (see test/workflows/code-run.test.ts).
        const limits = { ...config, runProcess: { ...config.runProcess, heartbeatTimeoutSeconds: 7200 } };
        const job = (await startDataJob({ ds, temporal: ts.env.client, config: limits }, caller, connector))!;
        await untilRequested(site, '/slow-limit');
        const wallClock = Date.now();
        await skipWhileActivityRuns(ts.env, (config.dataJob.timeLimitSeconds + 1) * 1000);
        const handle = ts.env.client.workflow.getHandle(workflowIdOf('data-job', job.data_job_id));
        expect(await handle.result()).to.equal('FAILED');
        expect(Date.now() - wallClock).to.be.lessThan(30_000);
        const after = await ds.getRepository(DataJob).findOneByOrFail({ data_job_id: job.data_job_id });
        expect(after.status_detail).to.deep.include({
          reason: 'TimeLimitExceeded',
          message: `Job exceeded its time limit of ${config.dataJob.timeLimitSeconds} s`,
        });
        expect(after.completed_at).to.be.instanceOf(Date);
      });
    } finally {
      await ts.stop();
    }
  });

  it('cancels through the api: CANCELLED, with who asked, and the outside request is closed', async () => {
    const { ds, env, config } = getStack();
    site.hanging.add('/slow-cancel');
    const { connector, caller, t } = await tenantWithConnector({ urls: [`${site.url}/slow-cancel`] }, 'webscraper');
    const job = (await startDataJob({ ds, temporal: env.client, config }, caller, connector))!;
    await untilRequested(site, '/slow-cancel');
    const cancelled = await cancelDataJob({ ds, temporal: env.client, config }, caller, job.data_job_id);
    expect(cancelled.status).to.equal('CANCELLED');
    expect(cancelled.status_detail).to.deep.include({ requested_by: t.userId });
    expect(await env.client.workflow.getHandle(workflowIdOf('data-job', job.data_job_id)).result()).to.equal(
      'CANCELLED',
    );
    for (let i = 0; i < 100 && !site.abandoned.includes('/slow-cancel'); i++)
      await new Promise((r) => setTimeout(r, 50));
    expect(site.abandoned).to.include('/slow-cancel');
    // Cancelling again answers the record as is; a finished job's cancel is a 409.
    const again = await as(t.key).post(`/api/data-jobs/${job.data_job_id}/cancel`);
    expect(again.status, again.text).to.equal(200);
    expect(again.body.status).to.equal('CANCELLED');
  });

  it('ends a job CANCELLED when its workflow is cancelled from Temporal (the UI)', async () => {
    const { ds, env, config } = getStack();
    site.hanging.add('/slow-ui');
    const { connector, caller } = await tenantWithConnector({ urls: [`${site.url}/slow-ui`] }, 'webscraper');
    const job = (await startDataJob({ ds, temporal: env.client, config }, caller, connector))!;
    await untilRequested(site, '/slow-ui');
    const handle = env.client.workflow.getHandle(workflowIdOf('data-job', job.data_job_id));
    await handle.cancel();
    const outcome = await handle.result().then(
      () => 'completed',
      (err: Error) => err.constructor.name,
    );
    expect(outcome).to.equal('WorkflowFailedError');
    const after = await ds.getRepository(DataJob).findOneByOrFail({ data_job_id: job.data_job_id });
    expect(after.status).to.equal('CANCELLED');
    expect(after.status_detail).to.deep.include({ requested_by: 'Temporal workflow cancellation' });
  });

  it('ends a job FAILED with the reason when its source cannot list anything', async () => {
    const { ds, env, config } = getStack();
    const t = await newTenant('data-job');
    const undeployed = await structureWithoutBuild(t.organizationId);
    const { connector, caller } = await tenantWithConnector({ structure_id: undeployed, args: [] }, 'structure', {
      organization_id: t.organizationId,
    });
    const job = (await startDataJob({ ds, temporal: env.client, config }, caller, connector))!;
    expect(await env.client.workflow.getHandle(workflowIdOf('data-job', job.data_job_id)).result()).to.equal('FAILED');
    const after = await ds.getRepository(DataJob).findOneByOrFail({ data_job_id: job.data_job_id });
    expect(after.status_detail).to.deep.include({ reason: 'NotDeployed' });
    expect(String(after.status_detail!.message)).to.include('no successful deployment');
  });

  it('a retried ingest (the worker lost mid-job) duplicates neither assets nor structure runs', async () => {
    const { ds, activityDeps } = getStack();
    const t = await newTenant('data-job');
    const producer = await structureWithBuild(t.organizationId, {
      files: {
        'structure.py': `${PY_PRELUDE}
items = [{"type": "TextArtifact", "value": "item %d" % i} for i in range(3)]
finish = {"type": "FinishStructureRunEvent", "timestamp": time.time(),
          "payload": {"output_task_output": {"type": "ListArtifact", "value": items}}}
assert call("POST", "api/structure-runs/" + RUN_ID + "/events", [finish]) == 202
`,
      },
    });
    const { connector } = await tenantWithConnector(
      { structure_id: producer.structureId, args: [] },
      'structure',
      {},
      t,
    );
    const jobId = (await runningDataJob(connector)).data_job_id;
    const ctl = { signal: new AbortController().signal, beat: () => undefined };
    // The first attempt's worker "dies" after the structure run was started: the second attempt runs it all.
    const first = await ingestDataJob(activityDeps, jobId, ctl);
    const second = await ingestDataJob(activityDeps, jobId, ctl);
    expect(first.stats).to.include({ written: 3 });
    expect(second.stats).to.include({ written: 0, unchanged: 3 });
    expect(await ds.getRepository(Run).countBy({ resource_id: producer.structureId })).to.equal(1);
    const assets = await ds
      .getRepository(Asset)
      .createQueryBuilder('a')
      .where('a.name LIKE :p', { p: `data-connectors/${connector.data_connector_id}/%` })
      .getCount();
    expect(assets).to.equal(3);
  });

  it('a data_lake job of 250 objects (several batches, items in flight) writes each once, and a re-run reads none', async () => {
    const { ds, activityDeps } = getStack();
    const t = await newTenant('data-job');
    const source = randomUUID();
    await ds.query(
      `INSERT INTO buckets (bucket_id, organization_id, name, created_by, created_at, updated_at)
       VALUES ($1, $2, 'source', 'test', now(), now())`,
      [source, t.organizationId],
    );
    const names = Array.from({ length: 250 }, (_, i) => `o/${String(i).padStart(3, '0')}.txt`);
    for (const name of names)
      await activityDeps.blobs.put(assetBlobKey(source, name), Readable.from([Buffer.from(`bytes of ${name}`)]), 1024);
    await ds.query(
      `INSERT INTO assets (bucket_id, name, organization_id, size, created_by, created_at, updated_at)
       SELECT $1, n, $2, length('bytes of ' || n), 'test', now(), now() FROM unnest($3::text[]) n`,
      [source, t.organizationId, names],
    );
    const { connector } = await tenantWithConnector({ bucket_id: source }, 'data_lake', {}, t);
    const ctl = { signal: new AbortController().signal, beat: () => undefined };
    const runJob = async () => ingestDataJob(activityDeps, (await runningDataJob(connector)).data_job_id, ctl);
    const first = await runJob();
    const bytes = names.reduce((sum, n) => sum + Buffer.byteLength(`bytes of ${n}`), 0);
    expect(first).to.deep.include({ status: 'SUCCEEDED', errors: [], bytesIngested: bytes });
    expect(first.stats).to.include({ listed: 250, written: 250, failed: 0 });
    const prefix = `data-connectors/${connector.data_connector_id}/`;
    const lake: Array<{ name: string; size: string; meta: Record<string, string> }> = await ds.query(
      `SELECT name, size, meta FROM assets WHERE bucket_id = $1 AND name LIKE $2 ORDER BY name`,
      [connector.bucket_id, `${prefix}%`],
    );
    expect(lake.map((a) => a.name)).to.deep.equal(names.map((n) => `${prefix}${n}`));
    for (const [i, a] of lake.entries()) {
      expect(Number(a.size)).to.equal(Buffer.byteLength(`bytes of ${names[i]}`));
      expect(a.meta.source_uri).to.equal(`data_lake://${source}/${names[i]}`);
      const blob = (await activityDeps.blobs.get(assetBlobKey(connector.bucket_id, a.name)))!;
      const parts: Buffer[] = [];
      for await (const part of blob.stream) parts.push(part as Buffer);
      expect(Buffer.concat(parts).toString()).to.equal(`bytes of ${names[i]}`);
    }
    const second = await runJob();
    expect(second.stats).to.include({ listed: 250, written: 0, unchanged: 250, removed: 0 });
  });

  it('the reconciler settles a data job whose workflow never existed: FAILED, WorkflowClosed', async () => {
    const { ds, env, config } = getStack();
    const { connector } = await tenantWithConnector({ urls: [`${site.url}/x`] }, 'webscraper');
    const job = await runningDataJob(connector, new Date(Date.now() - 5 * 60_000));
    const result = await env.client.workflow.execute('reconcilerWorkflow', {
      taskQueue: config.temporal.taskQueue,
      workflowId: `reconcile-${randomUUID()}`,
      args: [{ olderThanSeconds: 60 }],
    });
    expect(result.dataJobs).to.be.at.least(1);
    const after = await ds.getRepository(DataJob).findOneByOrFail({ data_job_id: job.data_job_id });
    expect(after.status).to.equal('FAILED');
    expect(after.completed_at).to.be.instanceOf(Date);
    expect(after.status_detail).to.include({ reason: 'WorkflowClosed' });
  });
});
