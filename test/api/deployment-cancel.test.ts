// Cancelling a deployment through the public api, on the real stack: a build whose script waits is cancelled
// mid-build (its process stops, its build directory goes, it ends ERROR with reason Cancelled and who asked:
// deployments have no CANCELLED status); a second cancel answers the same record; a deployment that ended
// otherwise is 409; unknown, foreign and malformed ids are 404, 404 and 400.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { as } from '../harness/client';
import { getStack, newTenant } from '../harness/stack';
import { config, entriesOf, makeArchive, uploadToNewBucket, waitForDeployment } from '../fixtures/projects';

/** Pids of the host's processes whose command line has `token` as an argument (a sandboxed one's too). */
function processesWith(token: string): number[] {
  return fs.readdirSync('/proc').flatMap((entry) => {
    if (!/^\d+$/.test(entry)) return [];
    try {
      const argv = fs.readFileSync(`/proc/${entry}/cmdline`, 'latin1').split('\0');
      const state = fs.readFileSync(`/proc/${entry}/status`, 'utf8');
      return argv.includes(token) && !/State:\s+Z/.test(state) ? [Number(entry)] : [];
    } catch {
      return []; // gone meanwhile
    }
  });
}

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('deployment cancel', function () {
  this.timeout(180_000);

  it('cancels a build mid-way: its process stops, ERROR with reason Cancelled; idempotent; 409 once ended otherwise', async () => {
    const t = await newTenant('deploy-cancel');
    const api = as(t.key);
    // A pre-build script that marks its start and then sleeps for a duration no other process has.
    const duration = `600.${Math.floor(Math.random() * 1e6)}`;
    const archive = makeArchive(
      'tar.gz',
      entriesOf({
        'structure_config.yaml': config('nodejs', '  main_file: main.js\n', '  pre_build_install_script: build.sh\n'),
        'build.sh': `touch started-marker\nsleep ${duration}\n`,
        'main.js': 'console.log("hi")\n',
      }),
    );
    const bucketId = await uploadToNewBucket(t.key, 'slow.tar.gz', archive);
    const created = await api.post('/api/structures', {
      name: 'slow build',
      code: { data_lake: { bucket_id: bucketId, asset_path: 'slow.tar.gz' } },
    });
    expect(created.status, created.text).to.equal(201);
    const deploymentId: string = created.body.latest_deployment_id;
    const buildPath = path.join(getStack().config.buildDir, deploymentId);
    await until('the build to start its script', () => fs.existsSync(path.join(buildPath, 'src', 'started-marker')));
    await until('the script to sleep', () => processesWith(duration).length > 0);
    expect((await api.get(`/api/deployments/${deploymentId}`)).body.status).to.equal('DEPLOYING');

    const asked = Date.now();
    const cancelled = await api.post(`/api/deployments/${deploymentId}/cancel`);
    const cancelMs = Date.now() - asked;
    console.log(`      cancel answered in ${cancelMs} ms`);
    expect(cancelled.status, cancelled.text).to.equal(200);
    expect(cancelled.body.status).to.equal('ERROR');
    expect(cancelled.body.status_detail).to.deep.equal({
      reason: 'Cancelled',
      message: `Cancelled by ${t.userId}`,
      requested_by: t.userId,
    });
    expect(cancelled.body.completed_at).to.be.a('string');
    expect(processesWith(duration), 'the build process stopped before the end was recorded').to.deep.equal([]);
    expect(fs.existsSync(buildPath), 'a cancelled build leaves nothing behind').to.equal(false);
    const handle = getStack().env.client.workflow.getHandle(`deployment-${deploymentId}`);
    expect(await handle.result()).to.equal('ERROR');

    const again = await api.post(`/api/deployments/${deploymentId}/cancel`);
    expect(again.status, again.text).to.equal(200);
    expect(again.body).to.deep.equal(cancelled.body);

    // A deployment that ended otherwise is refused.
    const plain = await api.post('/api/structures', { name: 'plain' });
    const done = await waitForDeployment(t.key, plain.body.latest_deployment_id);
    expect(done.status).to.equal('SUCCEEDED');
    const late = await api.post(`/api/deployments/${done.deployment_id}/cancel`);
    expect(late.status, late.text).to.equal(409);
    expect(late.body.errors[0].message).to.match(/already ended: SUCCEEDED/);
  });

  it('answers 404 for unknown and foreign deployments, 400 for a malformed id', async () => {
    const owner = await newTenant('deploy-cancel-owner');
    const plain = await as(owner.key).post('/api/structures', { name: 'plain' });
    const other = await newTenant('deploy-cancel-other');
    const foreign = await as(other.key).post(`/api/deployments/${plain.body.latest_deployment_id}/cancel`);
    expect(foreign.status, foreign.text).to.equal(404);
    const unknown = await as(other.key).post('/api/deployments/00000000-0000-4000-8000-000000000000/cancel');
    expect(unknown.status).to.equal(404);
    expect((await as(other.key).post('/api/deployments/not-a-uuid/cancel')).status).to.equal(400);
    // The owner's deployment went on.
    expect((await waitForDeployment(owner.key, plain.body.latest_deployment_id)).status).to.equal('SUCCEEDED');
  });
});
