// Knowledge bases through the public api, as the tests of retrieval use them: a text asset uploaded through
// a presigned URL, and a knowledge base job run to SUCCEEDED.
import { expect } from 'chai';
import { as, request } from './client';

type Api = ReturnType<typeof as>;

/** Makes the asset `name` of the bucket and uploads `text` to it through its presigned PUT URL. */
export async function uploadText(api: Api, bucketId: string, name: string, text: string): Promise<void> {
  expect((await api.put(`/api/buckets/${bucketId}/assets`, { name })).status).to.equal(201);
  const url = await api.post(`/api/buckets/${bucketId}/asset-urls/${name}`, { operation: 'PUT' });
  expect((await request('PUT', url.body.url, undefined, { raw: text })).status).to.equal(200);
}

/** Starts a job of the knowledge base and waits until it has SUCCEEDED (anything else fails the test). */
export async function runKnowledgeBaseJob(api: Api, knowledgeBaseId: string, timeoutMs = 90_000): Promise<void> {
  const job = await api.post(`/api/knowledge-bases/${knowledgeBaseId}/knowledge-base-jobs`);
  expect(job.status, job.text).to.equal(202);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const j = await api.get(`/api/knowledge-base-jobs/${job.body.knowledge_base_job_id}`);
    if (['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(j.body.status)) {
      expect(j.body.status, j.text).to.equal('SUCCEEDED');
      return;
    }
    if (Date.now() > deadline) throw new Error(`job did not end: ${j.text}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
