// The retrieval functions of assistant runs inside the workflow: the retrieval activity heartbeats while the
// provider embeds the query, so a workflow cancellation (the Temporal UI) reaches it and the run ends
// CANCELLED, and the run's time limit (a workflow timer, proved with time skipping) ends a run whose
// retrieval hangs ERROR.
import { expect } from 'chai';
import { Run } from '../../src/persistence/entities';
import { createAssistantRun } from '../../src/services/assistants/runs';
import { workflowIdOf } from '../../src/temporal/workflow-start';
import { as, request } from '../harness/client';
import { getStack, newTenant, startTimeSkipping } from '../harness/stack';
import { skipWhileActivityRuns } from '../support/time-skipping';
import { ownerCaller } from '../harness/people';

/**
 * A tenant with a knowledge base built with its own embedding model, whose embedding requests hang from
 * then on, an assistant over it, and a chat model scripted to call its retrieval function.
 */
async function assistantWithHangingRetrieval() {
  const provider = getStack().modelProvider;
  const embedding = provider.uniqueModel('retrieval-embed');
  const model = provider.uniqueModel('retrieval-chat');
  const t = await newTenant('kb-retrieval-wf');
  const api = as(t.key);
  const bucketId = (await api.post('/api/buckets', { name: 'b' })).body.bucket_id;
  await api.put(`/api/buckets/${bucketId}/assets`, { name: 'a.txt' });
  const url = await api.post(`/api/buckets/${bucketId}/asset-urls/a.txt`, { operation: 'PUT' });
  expect((await request('PUT', url.body.url, undefined, { raw: 'Paris is the capital of France.' })).status).to.equal(
    200,
  );
  const kb = await api.post('/api/knowledge-bases', {
    name: 'Facts',
    type: 'gtc_pg_vector',
    config: { gtc_pg_vector: { embedding_model: `local/${embedding}` } },
    asset_paths: [`${bucketId}/a.txt`],
  });
  const job = await api.post(`/api/knowledge-bases/${kb.body.knowledge_base_id}/knowledge-base-jobs`);
  for (let i = 0; i < 300; i++) {
    const j = await api.get(`/api/knowledge-base-jobs/${job.body.knowledge_base_job_id}`);
    if (j.body.status === 'SUCCEEDED') break;
    expect(j.body.status).to.be.oneOf(['QUEUED', 'RUNNING']);
    await new Promise((r) => setTimeout(r, 100));
  }
  provider.stallEmbeddings(embedding);
  provider.script({ model, toolCalls: [{ name: 'knowledge_base_Facts', arguments: '{"query": "capital"}' }] });
  const assistant = await api.post('/api/assistants', {
    name: 'Reader',
    knowledge_base_ids: [kb.body.knowledge_base_id],
  });
  const caller = ownerCaller(t);
  // The query's embedding request (the job's requests used the same model).
  const queried = () => provider.embeddingRequests.some((r) => r.model === embedding && r.input[0] === 'capital');
  const embeddingArrived = async () => {
    for (let i = 0; i < 400 && !queried(); i++) await new Promise((r) => setTimeout(r, 50));
    expect(queried()).to.equal(true);
  };
  return { api, caller, model, assistantId: assistant.body.assistant_id as string, embeddingArrived };
}

describe('assistant run retrieval functions', function () {
  this.timeout(120_000);

  it('ends CANCELLED when the workflow is cancelled while the retrieval waits on the provider', async () => {
    const { env } = getStack();
    const { api, model, assistantId, embeddingArrived } = await assistantWithHangingRetrieval();
    const created = await api.post(`/api/assistants/${assistantId}/runs`, {
      input: 'Capital?',
      model: `local/${model}`,
    });
    expect(created.status, created.text).to.equal(201);
    await embeddingArrived();
    const handle = env.client.workflow.getHandle(workflowIdOf('assistant-run', created.body.assistant_run_id));
    await handle.cancel();
    // The activity waits for nothing but the provider: the workflow closes only once the request was aborted.
    await handle.result().then(
      () => expect.fail('the workflow should close cancelled'),
      (err) => expect(String(err)).to.match(/cancel/i),
    );
    const run = await api.get(`/api/assistant-runs/${created.body.assistant_run_id}`);
    expect(run.body.status).to.equal('CANCELLED');
  });

  it('ends a run whose retrieval hangs ERROR at its time limit (a workflow timer)', async () => {
    const { ds, config } = getStack();
    const { caller, model, assistantId, embeddingArrived } = await assistantWithHangingRetrieval();
    const ts = await startTimeSkipping();
    try {
      await ts.runWorker(async () => {
        const limits = { ...config, runProcess: { ...config.runProcess, heartbeatTimeoutSeconds: 7200 } };
        const { run } = await createAssistantRun({ ds, temporal: ts.env.client, config: limits }, caller, assistantId, {
          input: 'Capital?',
          model: `local/${model}`,
        });
        await embeddingArrived();
        await skipWhileActivityRuns(ts.env, (config.runJob.timeLimitSeconds + 1) * 1000);
        const status = await ts.env.client.workflow.getHandle(workflowIdOf('assistant-run', run.run_id)).result();
        expect(status).to.equal('ERROR');
        const after = await ds.getRepository(Run).findOneByOrFail({ run_id: run.run_id });
        expect(after.status_detail).to.deep.include({ reason: 'TimeLimitExceeded' });
      });
    } finally {
      await ts.stop();
    }
  });
});
