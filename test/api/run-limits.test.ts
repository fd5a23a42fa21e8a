// A run and a build stopped by their memory limit, through the public api on the real stack: the whole
// run's memory is held under RUN_MEMORY_LIMIT_MB (its control group, read from the host), and the ending
// names the limit and its setting.
import { expect } from 'chai';
import { entriesOf, makeArchive, uploadToNewBucket, waitForDeployment, config } from '../fixtures/projects';
import { structureWithBuild } from '../harness/builds';
import { memoryHogs, watchRunMemory } from '../harness/cgroups';
import { as } from '../harness/client';
import { waitForRun } from '../harness/runs';
import { getStack, newTenant } from '../harness/stack';

const MiB = 1024 * 1024;

describe('run limits', function () {
  this.timeout(120_000);

  it('a run whose 4 processes each try to hold 1 GiB under its 2 GiB limit stays under it and ends ERROR MemoryLimitExceeded', async () => {
    const limitMb = getStack().config.runLimits.memoryMb;
    const t = await newTenant('memory-hog');
    const s = await structureWithBuild(t.organizationId, { files: { 'structure.py': memoryHogs(limitMb / 2) } });
    const watch = await watchRunMemory(t.organizationId);
    const created = await as(t.key).post(`/api/structures/${s.structureId}/runs`, { args: [] });
    expect(created.status, created.text).to.equal(201);
    const run = await waitForRun(t.key, created.body.structure_run_id, undefined, 60_000);
    const peak = watch.stop();
    console.log(`      the run's group peaked at ${Math.round(peak / MiB)} MiB of ${limitMb} MiB`);
    expect(run.status, JSON.stringify(run.status_detail)).to.equal('ERROR');
    expect(run.status_detail).to.deep.equal({
      reason: 'MemoryLimitExceeded',
      error: `The run used more than its memory limit of ${limitMb} MiB (RUN_MEMORY_LIMIT_MB): the kernel killed a process of it`,
    });
    expect(peak, 'the group was seen').to.be.above(limitMb * MiB * 0.5);
    expect(peak).to.be.at.most(limitMb * MiB);
  });

  it('a build step past the memory limit ends the deployment FAILED MemoryLimitExceeded', async () => {
    const limitMb = getStack().config.runLimits.memoryMb;
    const t = await newTenant('memory-build');
    const zip = makeArchive(
      'zip',
      entriesOf({
        'structure_config.yaml': config(
          'python3',
          '  main_file: structure.py\n',
          '  pre_build_install_script: greedy.sh\n',
        ),
        'greedy.sh': `python3 -c 'b = bytearray(${limitMb + 512} * 1024 * 1024)'\n`,
        'structure.py': 'print("never built")\n',
      }),
    );
    const bucketId = await uploadToNewBucket(t.key, 'code.zip', zip);
    const created = await as(t.key).post('/api/structures', {
      name: 'greedy-build',
      code: { data_lake: { bucket_id: bucketId, asset_path: 'code.zip' } },
    });
    expect(created.status, created.text).to.equal(201);
    const deployment = await waitForDeployment(t.key, created.body.latest_deployment_id);
    expect(deployment.status, JSON.stringify(deployment.status_detail)).to.equal('FAILED');
    expect(deployment.status_detail).to.include({
      reason: 'MemoryLimitExceeded',
      message: `The pre-build script greedy.sh used more than its memory limit of ${limitMb} MiB (RUN_MEMORY_LIMIT_MB): the kernel killed a process of it`,
    });
  });
});
