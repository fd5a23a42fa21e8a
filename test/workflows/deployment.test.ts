// The deployment workflow's time limit is a workflow timer: proved with the time-skipping test server,
// against a build that would otherwise hang for a day.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { Deployment } from '../../src/persistence/entities';
import { createCodeResource } from '../../src/services/code/code-resources';
import { workflowIdOf } from '../../src/temporal/workflow-start';
import { config, gitRepository } from '../fixtures/projects';
import { getStack, newTenant, startTimeSkipping } from '../harness/stack';
import { skipWhileActivityRuns } from '../support/time-skipping';
import { ownerCaller } from '../harness/people';

const callerOf = ownerCaller;

/** Whether a process whose command line contains `marker` is running. */
const running = (marker: string) => {
  const out = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' });
  return out.split('\n').some((l) => l.includes(marker) && !l.includes('ps -eo'));
};

describe('deployment workflow', function () {
  this.timeout(120_000);

  it('ends a build past its time limit ERROR, by the workflow timer, and kills the build', async () => {
    const { ds, config: stackConfig } = getStack();
    const t = await newTenant('deploy-timer');
    const marker = `sleep ${100000 + Math.floor(Math.random() * 1000)}`;
    gitRepository(t.organizationId.slice(0, 8), 'slow', [
      {
        'structure_config.yaml': config('nodejs', '  main_file: main.js\n', '  pre_build_install_script: hang.sh\n'),
        'hang.sh': `${marker}\n`,
        'main.js': 'console.log("never built")\n',
      },
    ]);
    const ts = await startTimeSkipping();
    try {
      await ts.runWorker(async () => {
        // Heartbeat timeouts count (skipped) server time while heartbeats arrive in real time: it must outlast
        // the skip, or it would end the build attempt before the time limit does.
        const limits = { ...stackConfig, runProcess: { ...stackConfig.runProcess, heartbeatTimeoutSeconds: 7200 } };
        const structure = await createCodeResource(
          { ds, temporal: ts.env.client, config: limits, box: getStack().box },
          callerOf(t),
          'structure',
          {
            name: 'hangs',
            code: { codehost: { owner: t.organizationId.slice(0, 8), name: 'slow', push: { branch: 'main' } } },
          },
        );
        const deploymentId = structure.latest_deployment_id!;
        for (let i = 0; i < 200 && !running(marker); i++) await new Promise((r) => setTimeout(r, 50));
        expect(running(marker), 'the build script runs').to.equal(true);

        const handle = ts.env.client.workflow.getHandle(workflowIdOf('deployment', deploymentId));
        const wallClock = Date.now();
        const skippedFrom = await ts.env.currentTimeMs();
        await skipWhileActivityRuns(ts.env, (stackConfig.deploymentJob.timeLimitSeconds + 1) * 1000);
        // Measured before result(): once the workflow closes, the test server's clock jumps far ahead.
        const skippedMs = (await ts.env.currentTimeMs()) - skippedFrom;
        expect(await handle.result()).to.equal('ERROR');
        expect(skippedMs).to.be.at.least(stackConfig.deploymentJob.timeLimitSeconds * 1000);
        expect(Date.now() - wallClock, 'without waiting for the limit').to.be.lessThan(30_000);
        const row = await ds.getRepository(Deployment).findOneByOrFail({ deployment_id: deploymentId });
        expect(row.status_detail).to.deep.equal({
          reason: 'TimeLimitExceeded',
          message: `Deployment exceeded its time limit of ${stackConfig.deploymentJob.timeLimitSeconds} s`,
        });
        expect(row.completed_at).to.be.instanceOf(Date);
        expect(running(marker), 'the build script was killed').to.equal(false);
        expect(fs.existsSync(path.join(stackConfig.buildDir, deploymentId)), 'the partial build is removed').to.equal(
          false,
        );
      });
    } finally {
      await ts.stop();
    }
  });
});
