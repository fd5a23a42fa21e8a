// A run's process ends, but the execute activity's answer never reaches Temporal (the server unreachable past
// the worker's ~10 s of retries: the temporal-restart drill). Temporal retries the activity once the heartbeat
// timeout passes; the retry finds the run RUNNING and must answer how the process ended, not WorkerLost, and
// without running the code again. The activity runs in the SDK's mock activity context (attempt 1, then 2), on
// the real database, sandbox and build; the workflow itself waits on a task queue no worker polls.
import { MockActivityEnvironment } from '@temporalio/testing';
import { expect } from 'chai';
import { createActivities } from '../../activities';
import type { Caller } from '../../src/services/caller';
import { createStructureRun } from '../../src/services/code/runs/structure-runs';
import { finishRun, markStarting } from '../../src/services/code/runs/lifecycle';
import type { RunEnding } from '../../src/temporal/contracts';
import { workflowIdOf } from '../../src/temporal/workflow-start';
import { structureWithBuild } from '../harness/builds';
import { getStack, newTenant } from '../harness/stack';

const PROGRAM = `
import sys
print("ran once")
sys.exit(3)
`;

describe('a run whose execute answer was lost', function () {
  this.timeout(60_000);

  it("answers the process's recorded ending on the retry, without running the code again, and forgets it at the end", async () => {
    const { ds, config, env, activityDeps } = getStack();
    const t = await newTenant();
    const caller: Caller = { ...t, apiKeyId: t.userId, actor: t.userId, runId: null, role: 'owner' };
    const s = await structureWithBuild(t.organizationId, { files: { 'structure.py': PROGRAM } });
    const idle = { ...config, temporal: { ...config.temporal, taskQueue: 'tarmac-test-nobody-polls' } };
    const run = await createStructureRun({ ds, temporal: env.client, config: idle }, caller, s.structureId, {
      args: [],
      env_vars: [],
    });
    try {
      const { executeCodeRun } = createActivities(activityDeps);
      expect(await markStarting(ds, run.run_id)).to.equal('STARTING');
      const attempt = (n: number): Promise<RunEnding> =>
        new MockActivityEnvironment({ attempt: n, heartbeatTimeoutMs: 30_000 }).run(executeCodeRun, {
          runId: run.run_id,
          timeLimitSeconds: 60,
        });

      const first = await attempt(1);
      expect(first).to.include({ status: 'FAILED', exitCode: 3 });
      // Recorded beside the answer, not awaited by it.
      let row: { status: string; execution_ending: unknown } | undefined;
      for (let i = 0; i < 100 && !row?.execution_ending; i++, await new Promise((r) => setTimeout(r, 20)))
        [row] = await ds.query(`SELECT status, execution_ending FROM runs WHERE run_id = $1`, [run.run_id]);
      expect(row!.status).to.equal('RUNNING');
      expect(row!.execution_ending).to.deep.equal(first);

      // Temporal never got `first`: its retry answers it.
      expect(await attempt(2)).to.deep.equal(first);
      const lines = await ds.query(`SELECT line FROM run_logs WHERE run_id = $1`, [run.run_id]);
      expect(lines.map((l: { line: string }) => l.line)).to.deep.equal(['ran once']);

      expect(await finishRun(ds, run.run_id, first)).to.equal('FAILED');
      const [ended] = await ds.query(`SELECT execution_ending FROM runs WHERE run_id = $1`, [run.run_id]);
      expect(ended.execution_ending).to.equal(null);
    } finally {
      await env.client.workflow.getHandle(workflowIdOf('structure-run', run.run_id)).terminate('test over');
    }
  });
});
