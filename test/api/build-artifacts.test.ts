// Builds reach every worker through the blob store (src/runtime/build/local-builds.ts), against the real stack:
// a deployment publishes its build as an artifact; with the build directory deleted (a worker host with a disk
// of its own) a run fetches it, verifies its digest, unpacks it with the owners of a build made there and runs;
// an overwritten artifact ends the run ERROR (BuildCorrupt); the same on an S3 blob store (moto). Prints the
// artifact's size and the time of a fetch and unpack for the default python project, a nodejs project and a
// python3 project with a requirement (pip in its venv).
import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { expect } from 'chai';
import type { BlobStore } from '../../src/blobs/blob-store';
import { createLogger } from '../../src/logger';
import { LocalBuilds } from '../../src/runtime/build/local-builds';
import { as } from '../harness/client';
import { startS3Server, type S3Server } from '../harness/s3-server';
import { configWith, getStack, newTenant, startApi, startWorker } from '../harness/stack';
import {
  config as projectConfig,
  entriesOf,
  makeArchive,
  uploadToNewBucket,
  waitForDeployment,
} from '../fixtures/projects';

interface DeploymentRow {
  deployment_id: string;
  build_path: string;
  build_artifact_key: string;
  build_sha256: string;
  build_artifact_bytes: string;
}

const rowOf = async (deploymentId: string): Promise<DeploymentRow> =>
  (
    await getStack().ds.query(
      `SELECT deployment_id, build_path, build_artifact_key, build_sha256, build_artifact_bytes FROM deployments WHERE deployment_id = $1`,
      [deploymentId],
    )
  )[0];

/** Starts a run of the structure and polls it to its end. */
async function runToEnd(key: string, structureId: string, baseUrl?: string) {
  const api = as(key, baseUrl);
  const run = await api.post(`/api/structures/${structureId}/runs`, { args: ['from', 'afar'] });
  expect(run.status, run.text).to.equal(201);
  for (let i = 0; ; i++) {
    const got = (await api.get(`/api/structure-runs/${run.body.structure_run_id}`)).body;
    if (['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(got.status)) return got;
    if (i > 1200) throw new Error(`run still ${got.status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A fresh worker's disk fetching and unpacking the artifact: its size and the time taken. */
async function measureFetch(blobs: BlobStore, row: DeploymentRow, label: string): Promise<void> {
  const disk = fs.mkdtempSync(path.join(os.tmpdir(), 'tarmac-fetch-'));
  const { sandbox } = getStack().activityDeps;
  try {
    const builds = new LocalBuilds({
      buildDir: disk,
      blobs,
      maxBytes: 1024 ** 3,
      maxBuildBytes: getStack().config.buildQuota.diskBytes,
      ownTree: (dir, index) => sandbox.chownTree(dir, { platformFor: sandbox.gidOf(index) }),
      sandboxed: sandbox.enabled,
      log: createLogger('silent', 'test-fetch'),
    });
    const started = process.hrtime.bigint();
    const held = await builds.use(
      row.deployment_id,
      { key: row.build_artifact_key, sha256: row.build_sha256, size: Number(row.build_artifact_bytes) },
      0,
    );
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    held.release();
    const kib = (n: number) => `${(n / 1024).toFixed(0)} KiB`;
    console.log(
      `      (${label}: artifact ${kib(Number(row.build_artifact_bytes))}, unpacked ${kib(builds.heldBytes())}; fetch + verify + unpack ${ms.toFixed(0)} ms)`,
    );
  } finally {
    fs.rmSync(disk, { recursive: true, force: true });
  }
}

describe('build artifacts: a build runs on a worker that did not build it', function () {
  this.timeout(300_000);

  it('publishes the build; without its directory a run fetches, verifies and runs it', async () => {
    const { config, activityDeps, ds } = getStack();
    const t = await newTenant('artifact-fetch');
    const created = await as(t.key).post('/api/structures', { name: 'plain' });
    expect((await waitForDeployment(t.key, created.body.latest_deployment_id)).status).to.equal('SUCCEEDED');
    const row = await rowOf(created.body.latest_deployment_id);
    expect(row.build_artifact_key).to.equal(`builds/${row.deployment_id}/${row.build_sha256}.tar.gz`);
    const stored = fs.readFileSync(path.join(config.blobDir, row.build_artifact_key));
    expect(createHash('sha256').update(stored).digest('hex')).to.equal(row.build_sha256);
    expect(Number(row.build_artifact_bytes)).to.equal(stored.length);
    await measureFetch(activityDeps.blobs, row, 'default python structure');

    // The builder runs its own copy.
    const local = await runToEnd(t.key, created.body.structure_id);
    expect(local.status, JSON.stringify(local.status_detail)).to.equal('SUCCEEDED');

    // Another host's disk: no build there.
    fs.rmSync(row.build_path, { recursive: true, force: true });
    const started = Date.now();
    const fetched = await runToEnd(t.key, created.body.structure_id);
    expect(fetched.status, JSON.stringify(fetched.status_detail)).to.equal('SUCCEEDED');
    console.log(`      (a run that fetched its build first: ${Date.now() - started} ms)`);
    expect(fetched.output).to.deep.equal({ type: 'TextArtifact', value: 'from afar' });
    expect(fs.existsSync(path.join(row.build_path, 'manifest.json'))).to.equal(true);
    if (activityDeps.sandbox.mode === 'root') {
      // The owners and modes of a build made on this worker: root's, readable by the organization's group.
      const [org] = await ds.query(`SELECT sandbox_index FROM organizations WHERE organization_id = $1`, [
        t.organizationId,
      ]);
      const st = fs.statSync(row.build_path);
      expect({ uid: st.uid, gid: st.gid, mode: st.mode & 0o7777 }).to.deep.equal({
        uid: 0,
        gid: activityDeps.sandbox.gidOf(org.sandbox_index),
        mode: 0o750,
      });
      expect(fs.statSync(config.buildDir).mode & 0o777).to.equal(0o711);
    }
  });

  it('ends a run ERROR (BuildCorrupt) when the artifact is not the recorded one', async () => {
    const { config } = getStack();
    const t = await newTenant('artifact-corrupt');
    const created = await as(t.key).post('/api/structures', { name: 'plain' });
    expect((await waitForDeployment(t.key, created.body.latest_deployment_id)).status).to.equal('SUCCEEDED');
    const row = await rowOf(created.body.latest_deployment_id);
    const blobFile = path.join(config.blobDir, row.build_artifact_key);
    const bytes = fs.readFileSync(blobFile);
    bytes[bytes.length >> 1] ^= 0xff;
    fs.writeFileSync(blobFile, bytes);
    fs.rmSync(row.build_path, { recursive: true, force: true });
    const run = await runToEnd(t.key, created.body.structure_id);
    expect(run.status).to.equal('ERROR');
    expect(run.status_detail.reason).to.equal('BuildCorrupt');
    expect(JSON.stringify(run.status_detail)).to.include(`not the recorded sha256:${row.build_sha256}`);
    expect(fs.existsSync(row.build_path)).to.equal(false);
  });

  it('fetches a nodejs build the same way', async () => {
    const t = await newTenant('artifact-node');
    const archive = makeArchive(
      'tar.gz',
      entriesOf({
        'structure_config.yaml': projectConfig('nodejs', '  main_file: main.js\n'),
        'package.json': JSON.stringify({ name: 'demo', version: '1.0.0', private: true }),
        'main.js': "console.log('node says', process.argv.slice(2).join(' '));\n",
      }),
    );
    const bucketId = await uploadToNewBucket(t.key, 'node.tgz', archive);
    const created = await as(t.key).post('/api/structures', {
      name: 'node',
      code: { data_lake: { bucket_id: bucketId, asset_path: 'node.tgz' } },
    });
    const deployment = await waitForDeployment(t.key, created.body.latest_deployment_id);
    expect(deployment.status, JSON.stringify(deployment.status_detail)).to.equal('SUCCEEDED');
    const row = await rowOf(deployment.deployment_id);
    await measureFetch(getStack().activityDeps.blobs, row, 'nodejs structure');
    fs.rmSync(row.build_path, { recursive: true, force: true });
    const run = await runToEnd(t.key, created.body.structure_id);
    expect(run.status, JSON.stringify(run.status_detail)).to.equal('SUCCEEDED');
    const logs = await as(t.key).get(`/api/structure-runs/${run.structure_run_id}/logs`);
    expect(logs.body.logs).to.deep.equal(['node says from afar']);
  });

  it('fetches a python3 build with pip and a requirement in its venv', async () => {
    const t = await newTenant('artifact-pip');
    const archive = makeArchive(
      'zip',
      entriesOf({
        'structure_config.yaml': projectConfig(
          'python3',
          '  main_file: main.py\n',
          '  requirements_file: requirements.txt\n',
        ),
        'requirements.txt': 'six==1.17.0\n',
        'main.py': 'import sys, six\nprint("six", six.__version__, sys.argv[1:])\n',
      }),
    );
    const bucketId = await uploadToNewBucket(t.key, 'py.zip', archive);
    const created = await as(t.key).post('/api/structures', {
      name: 'py',
      code: { data_lake: { bucket_id: bucketId, asset_path: 'py.zip' } },
    });
    const deployment = await waitForDeployment(t.key, created.body.latest_deployment_id);
    expect(deployment.status, JSON.stringify(deployment.status_detail)).to.equal('SUCCEEDED');
    const row = await rowOf(deployment.deployment_id);
    await measureFetch(getStack().activityDeps.blobs, row, 'python3 structure with pip and six');
    fs.rmSync(row.build_path, { recursive: true, force: true });
    const run = await runToEnd(t.key, created.body.structure_id);
    expect(run.status, JSON.stringify(run.status_detail)).to.equal('SUCCEEDED');
    const logs = await as(t.key).get(`/api/structure-runs/${run.structure_run_id}/logs`);
    expect(logs.body.logs).to.deep.equal(["six 1.17.0 ['from', 'afar']"]);
  });

  describe('with blobs in S3 (moto)', () => {
    let s3: S3Server;
    const closers: Array<() => Promise<void>> = [];
    before(async () => {
      s3 = await startS3Server();
      await s3.createBucket('tarmac-builds');
    });
    after(async () => {
      for (const close of closers.splice(0)) await close();
      await s3?.stop();
    });

    it('publishes to the object store and fetches from it', async () => {
      const settings = configWith({
        TEMPORAL_TASK_QUEUE: `build-artifacts-s3-${randomUUID().slice(0, 8)}`,
        BLOB_STORE: 's3',
        BLOB_S3_BUCKET: 'tarmac-builds',
        BLOB_S3_ENDPOINT: s3.endpoint,
        BLOB_S3_FORCE_PATH_STYLE: 'true',
        BLOB_S3_ACCESS_KEY_ID: s3.admin.accessKeyId,
        BLOB_S3_SECRET_ACCESS_KEY: s3.admin.secretAccessKey,
      });
      const worker = await startWorker(settings);
      const api = await startApi(getStack().env.client, 0, settings);
      closers.push(api.close, worker.close);
      const t = await newTenant('artifact-s3');
      const created = await as(t.key, api.baseUrl).post('/api/structures', { name: 'plain' });
      expect((await waitForDeployment(t.key, created.body.latest_deployment_id)).status).to.equal('SUCCEEDED');
      const row = await rowOf(created.body.latest_deployment_id);
      const object = await s3
        .client()
        .send(new GetObjectCommand({ Bucket: 'tarmac-builds', Key: row.build_artifact_key }));
      const body = Buffer.from(await object.Body!.transformToByteArray());
      expect(createHash('sha256').update(body).digest('hex')).to.equal(row.build_sha256);
      expect(fs.existsSync(path.join(getStack().config.blobDir, row.build_artifact_key))).to.equal(false);

      fs.rmSync(row.build_path, { recursive: true, force: true });
      const run = await runToEnd(t.key, created.body.structure_id, api.baseUrl);
      expect(run.status, JSON.stringify(run.status_detail)).to.equal('SUCCEEDED');
      expect(run.output).to.deep.equal({ type: 'TextArtifact', value: 'from afar' });
    });
  });
});
