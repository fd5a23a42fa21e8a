// The knowledge base job workflow's own guarantees: the time limit is a workflow timer (proved with time
// skipping while the ingest activity waits on an embedding request that never answers), and a Temporal
// workflow cancellation (the UI's cancel) ends the job CANCELLED like the api's cancel.
import { expect } from 'chai';
import { KnowledgeBaseJob } from '../../src/persistence/entities';
import { createJob } from '../../src/services/knowledge/jobs';
import { workflowIdOf } from '../../src/temporal/workflow-start';
import { as, request } from '../harness/client';
import { getStack, newTenant, startTimeSkipping } from '../harness/stack';
import { skipWhileActivityRuns } from '../support/time-skipping';
import { ownerCaller } from '../harness/people';

/** A tenant with a knowledge base over one asset whose embedding requests never get an answer. */
async function stalledKnowledgeBase() {
  const provider = getStack().modelProvider;
  const model = provider.uniqueModel('stall-job');
  provider.stallEmbeddings(model);
  const t = await newTenant('kb-job');
  const api = as(t.key);
  const bucketId = (await api.post('/api/buckets', { name: 'b' })).body.bucket_id;
  await api.put(`/api/buckets/${bucketId}/assets`, { name: 'a.txt' });
  const url = await api.post(`/api/buckets/${bucketId}/asset-urls/a.txt`, { operation: 'PUT' });
  expect((await request('PUT', url.body.url, undefined, { raw: 'words to embed' })).status).to.equal(200);
  const kb = await api.post('/api/knowledge-bases', {
    name: 'stalled',
    type: 'gtc_pg_vector',
    config: { gtc_pg_vector: { embedding_model: `local/${model}` } },
    asset_paths: [`${bucketId}/a.txt`],
  });
  expect(kb.status, kb.text).to.equal(201);
  const caller = ownerCaller(t);
  const embeddingArrived = async () => {
    for (let i = 0; i < 400 && !provider.embeddingRequests.some((r) => r.model === model); i++)
      await new Promise((r) => setTimeout(r, 50));
    expect(provider.embeddingRequests.some((r) => r.model === model)).to.equal(true);
  };
  return { caller, knowledgeBaseId: kb.body.knowledge_base_id as string, embeddingArrived };
}

describe('knowledge base job workflow', function () {
  this.timeout(120_000);

  it('ends a job past its time limit FAILED, by the workflow timer, without waiting for it', async () => {
    const { ds, config } = getStack();
    const { caller, knowledgeBaseId, embeddingArrived } = await stalledKnowledgeBase();
    const ts = await startTimeSkipping();
    try {
      await ts.runWorker(async () => {
        // Heartbeat timeouts count skipped server time: it must outlast the skip (see test/workflows/code-run.test.ts).
        const limits = { ...config, runProcess: { ...config.runProcess, heartbeatTimeoutSeconds: 7200 } };
        const job = await createJob({ ds, temporal: ts.env.client, config: limits }, caller, knowledgeBaseId);
        await embeddingArrived();
        const wallClock = Date.now();
        await skipWhileActivityRuns(ts.env, (config.knowledgeBaseJob.timeLimitSeconds + 1) * 1000);
        const handle = ts.env.client.workflow.getHandle(workflowIdOf('knowledge-base-job', job.knowledge_base_job_id));
        expect(await handle.result()).to.equal('FAILED');
        expect(Date.now() - wallClock).to.be.lessThan(30_000);
        const after = await ds.getRepository(KnowledgeBaseJob).findOneByOrFail({
          knowledge_base_job_id: job.knowledge_base_job_id,
        });
        expect(after.status_detail).to.deep.include({
          reason: 'TimeLimitExceeded',
          message: `Job exceeded its time limit of ${config.knowledgeBaseJob.timeLimitSeconds} s`,
        });
        expect(after.completed_at).to.be.instanceOf(Date);
      });
    } finally {
      await ts.stop();
    }
  });

  it('ends a job CANCELLED when its workflow is cancelled from Temporal (the UI)', async () => {
    const { ds, env, config } = getStack();
    const { caller, knowledgeBaseId, embeddingArrived } = await stalledKnowledgeBase();
    const job = await createJob({ ds, temporal: env.client, config }, caller, knowledgeBaseId);
    await embeddingArrived();
    const handle = env.client.workflow.getHandle(workflowIdOf('knowledge-base-job', job.knowledge_base_job_id));
    await handle.cancel();
    const outcome = await handle.result().then(
      () => 'completed',
      (err: Error) => err.constructor.name,
    );
    expect(outcome).to.equal('WorkflowFailedError');
    const after = await ds.getRepository(KnowledgeBaseJob).findOneByOrFail({
      knowledge_base_job_id: job.knowledge_base_job_id,
    });
    expect(after.status).to.equal('CANCELLED');
    expect(after.status_detail).to.deep.include({ requested_by: 'Temporal workflow cancellation' });
  });
});
