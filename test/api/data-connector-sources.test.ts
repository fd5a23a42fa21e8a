// The objstore, drive and wiki connectors through the HTTP API, end to end: a data job reads the outside
// source (a real S3-compatible server, moto; the drive and wiki doubles of the stack), writes assets with
// their metadata, skips what did not change, and keeps the drive's OAuth token sealed in the connector.
import { expect } from 'chai';
import { DataConnector } from '../../src/persistence/entities';
import { as } from '../harness/client';
import { startS3Server, type S3Server } from '../harness/s3-server';
import { getStack, newTenant } from '../harness/stack';

type Api = ReturnType<typeof as>;

async function jobEnd(api: Api, jobId: string) {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const job = await api.get(`/api/data-jobs/${jobId}`);
    expect(job.status, job.text).to.equal(200);
    if (['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(job.body.status)) return job.body;
    if (Date.now() > deadline) throw new Error(`data job ${jobId} still ${job.body.status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function rerun(api: Api, connectorId: string) {
  const created = await api.post(`/api/data-connectors/${connectorId}/data-jobs`);
  expect(created.status, created.text).to.equal(202);
  return jobEnd(api, created.body.data_job_id);
}

async function assetsOf(api: Api, bucketId: string, connectorId: string) {
  const res = await api.get(`/api/buckets/${bucketId}/assets?prefix=data-connectors/${connectorId}/&page_size=100`);
  expect(res.status, res.text).to.equal(200);
  return res.body.assets as Array<{ name: string }>;
}

describe('data connector sources through the API (objstore, drive, wiki)', function () {
  this.timeout(240_000);
  let api: Api;
  let s3: S3Server;

  before(async () => {
    api = as((await newTenant()).key);
    s3 = await startS3Server();
  });
  after(async () => s3?.stop());

  it('objstore: reads objects by prefix and key from an S3-compatible store; a re-run rewrites nothing', async () => {
    await s3.createBucket('lake-source');
    const client = s3.client();
    const { PutObjectCommand } = await import('@aws-sdk/client-s3');
    for (const [key, body] of [
      ['docs/a.txt', 'alpha'],
      ['docs/b.md', '# beta'],
      ['other.txt', 'gamma'],
    ])
      await client.send(new PutObjectCommand({ Bucket: 'lake-source', Key: key, Body: body }));
    const created = await api.post('/api/data-connectors', {
      name: 'S3',
      type: 'objstore',
      config: {
        objstore: {
          objstore_access_key_id: s3.admin.accessKeyId,
          objstore_secret_access_key: s3.admin.secretAccessKey,
          uris: ['s3://lake-source/docs/', 's3://lake-source/other.txt', 's3://lake-source/missing.txt'],
          objstore_endpoint: s3.endpoint,
          objstore_force_path_style: true,
        },
      },
    });
    expect(created.status, created.text).to.equal(201);
    expect(created.text).to.not.include(s3.admin.secretAccessKey);
    const first = await jobEnd(api, created.body.data_job_id);
    expect(first.status, JSON.stringify(first)).to.equal('SUCCEEDED');
    expect(first.errors.map((e: any) => e.type)).to.deep.equal(['NotFound']);
    expect(first.bytes_ingested).to.equal('alpha# betagamma'.length);
    const names = (await assetsOf(api, created.body.bucket_id, created.body.data_connector_id)).map((a) => a.name);
    expect(names).to.have.length(3);

    const second = await rerun(api, created.body.data_connector_id);
    expect(second.status).to.equal('SUCCEEDED');
    expect(second.bytes_ingested, 'unchanged objects are not read again').to.equal(0);
  });

  it('drive: exchanges the auth code once, keeps the token sealed, reads files and exports', async () => {
    const { drive } = getStack();
    const notes = drive.addFile({ name: 'Notes', mimeType: 'application/vnd.google-apps.document', content: 'hi' });
    const plain = drive.addFile({ name: 'plain.txt', mimeType: 'text/plain', content: 'plain text' });
    const code = drive.issueCode();
    const created = await api.post('/api/data-connectors', {
      name: 'Drive',
      type: 'drive',
      config: { drive: { auth_code: code, file_ids: [notes, plain] } },
    });
    expect(created.status, created.text).to.equal(201);
    const first = await jobEnd(api, created.body.data_job_id);
    expect(first.status, JSON.stringify(first)).to.equal('SUCCEEDED');
    expect(first.errors).to.deep.equal([]);
    expect(await assetsOf(api, created.body.bucket_id, created.body.data_connector_id)).to.have.length(2);

    const row = await getStack().ds.getRepository(DataConnector).findOneByOrFail({
      data_connector_id: created.body.data_connector_id,
    });
    expect(row.config.drive.access_token, 'the token is stored, sealed').to.have.property('sealed');
    expect(JSON.stringify(row.config)).to.not.include(code);
    const got = await api.get(`/api/data-connectors/${created.body.data_connector_id}`);
    expect(got.body.config.drive.access_token).to.equal('');

    // The code was for one use: a second job works with the stored token.
    const second = await rerun(api, created.body.data_connector_id);
    expect(second.status, JSON.stringify(second)).to.equal('SUCCEEDED');
  });

  it('wiki: reads the pages of the wiki as text; a refused token fails the job saying so', async () => {
    const { wiki } = getStack();
    const root = wiki.addPage({ title: 'Home', space: 'ENG', body: '<p>Welcome</p>' });
    wiki.addPage({ title: 'Runbook', space: 'ENG', parent: root, body: '<h1>Restart</h1><p>npm run api</p>' });
    const created = await api.post('/api/data-connectors', {
      name: 'Wiki',
      type: 'wiki',
      config: { wiki: { wiki_email: wiki.email, wiki_api_token: wiki.token, domain: 'example.atlassian.net' } },
    });
    expect(created.status, created.text).to.equal(201);
    const first = await jobEnd(api, created.body.data_job_id);
    expect(first.status, JSON.stringify(first)).to.equal('SUCCEEDED');
    expect((await assetsOf(api, created.body.bucket_id, created.body.data_connector_id)).length).to.be.at.least(2);

    const refused = await api.post('/api/data-connectors', {
      name: 'Wiki',
      type: 'wiki',
      config: { wiki: { wiki_email: wiki.email, wiki_api_token: 'wrong', domain: 'example.atlassian.net' } },
    });
    const failed = await jobEnd(api, refused.body.data_job_id);
    expect(failed.status).to.equal('FAILED');
    expect(JSON.stringify(failed.status_detail)).to.match(/401|refused|token/i);
  });
});
