// A run's row may be committed only after Temporal accepted its workflow (insertAndStart in one transaction),
// so on a loaded machine the workflow's first step (the execution slot's acquire, then the start activity) can
// look for the row before the commit. It must wait for it, not end the workflow as if there were no run (which
// left such runs QUEUED for good).
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { Run } from '../../src/persistence/entities';
import { startOptionsFor } from '../../src/temporal/workflow-start';
import type { ChatMessageInput } from '../../src/temporal/contracts';
import { getStack, newTenant } from '../harness/stack';
import { aRun } from '../harness/runs';

describe('run start before the row is committed', function () {
  this.timeout(60_000);

  it('waits for the commit: the run starts and ends normally', async () => {
    const { ds, env, config, modelProvider: provider } = getStack();
    const t = await newTenant();
    const model = provider.uniqueModel();
    provider.script({ model, text: 'Late but fine.' });
    const runId = randomUUID();
    const now = new Date();
    const request = {
      messages: [
        { role: 'user', content: [{ type: 'TextMessageContent', artifact: { type: 'TextArtifact', value: 'hi' } }] },
      ],
      tools: [],
      driver_configuration: { model: `local/${model}` },
    };

    const tx = ds.createQueryRunner();
    await tx.connect();
    await tx.startTransaction();
    try {
      await tx.manager.getRepository(Run).save(
        aRun(
          {
            run_id: runId,
            kind: 'chat',
            organization_id: t.organizationId,
            input: { stream: false, request },
            created_by: t.userId,
          },
          now,
        ),
      );
      const args: ChatMessageInput = { runId, timeLimitSeconds: 60, heartbeatTimeoutSeconds: 15 };
      const handle = await env.client.workflow.start('chatMessageWorkflow', {
        ...startOptionsFor(
          { kind: 'chat-run', id: runId, organizationId: t.organizationId, summary: 'test' },
          config.temporal.taskQueue,
        ),
        args: [args],
      });
      // The workflow's first task is running: its first step, the execution slot's acquire (a local activity,
      // not in the pending activities), looks for the row and cannot see it yet.
      for (;;) {
        const history = await handle.fetchHistory();
        if ((history.events ?? []).some((e) => e.workflowTaskStartedEventAttributes)) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      await new Promise((r) => setTimeout(r, 500));
      const [seen] = await ds.query(`SELECT count(*)::int AS n FROM runs WHERE run_id = $1`, [runId]);
      expect(seen.n, 'the row is not committed yet').to.equal(0);
      await tx.commitTransaction();
      expect(await handle.result()).to.equal('SUCCEEDED');
    } finally {
      if (tx.isTransactionActive) await tx.rollbackTransaction();
      await tx.release();
    }
    const run = await ds.getRepository(Run).findOneByOrFail({ run_id: runId });
    expect(run.status).to.equal('SUCCEEDED');
    expect((run.output as { content: Array<{ artifact: { value: string } }> }).content[0].artifact.value).to.equal(
      'Late but fine.',
    );
  });
});
