// The reconciler settles rows whose workflow closed without recording a final state (here: a terminated
// workflow and one that never existed), on the real dev server.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import {
  CodeResource,
  Deployment,
  Integration,
  IntegrationDelivery,
  KnowledgeBase,
  KnowledgeBaseJob,
  Run,
  RunEvent,
} from '../../src/persistence/entities';
import { workflowIdOf } from '../../src/temporal/workflow-start';
import { getStack, newTenant } from '../harness/stack';
import { aRun } from '../harness/runs';

async function openRecords(organizationId: string) {
  const { ds } = getStack();
  const past = new Date(Date.now() - 5 * 60_000);
  const resource = await ds.getRepository(CodeResource).save({
    resource_id: randomUUID(),
    kind: 'structure',
    organization_id: organizationId,
    name: 's',
    description: '',
    code: { default: {} },
    config_file: null,
    env_vars: [],
    webhook_enabled: false,
    latest_deployment_id: null,
    created_by: 'test',
    created_at: past,
    updated_at: past,
  });
  const run = (status: Run['status']) =>
    ds.getRepository(Run).save(
      aRun(
        {
          run_id: randomUUID(),
          kind: 'structure',
          organization_id: organizationId,
          resource_id: resource.resource_id,
          status,
          started_at: past,
          created_by: 'test',
        },
        past,
      ),
    );
  const deployment = await ds.getRepository(Deployment).save({
    deployment_id: randomUUID(),
    organization_id: organizationId,
    resource_id: resource.resource_id,
    resource_kind: 'structure',
    status: 'DEPLOYING',
    status_detail: null,
    code_source: { default: {} },
    build_path: null,
    created_by: 'test',
    created_at: past,
    updated_at: past,
    completed_at: null,
  });
  return {
    terminated: await run('RUNNING'),
    neverStarted: await run('QUEUED'),
    live: await run('RUNNING'),
    deployment,
  };
}

describe('reconciler', () => {
  it('settles runs and deployments whose workflow is gone, and leaves live ones alone', async () => {
    const t = await newTenant();
    const { ds, env, config } = getStack();
    const { terminated, neverStarted, live, deployment } = await openRecords(t.organizationId);
    const startUnder = (runId: string) =>
      env.client.workflow.start('inviteWorkflow', {
        taskQueue: config.temporal.taskQueue,
        workflowId: workflowIdOf('structure-run', runId),
        args: [
          {
            inviteId: randomUUID(),
            organizationId: t.organizationId,
            expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
          },
        ],
      });
    const liveWorkflow = await startUnder(live.run_id);

    // A workflow under the run's id that an operator terminated from the UI.
    await (await startUnder(terminated.run_id)).terminate('operator stopped it');

    const result = await env.client.workflow.execute('reconcilerWorkflow', {
      taskQueue: config.temporal.taskQueue,
      workflowId: `reconcile-${randomUUID()}`,
      args: [{ olderThanSeconds: 60 }],
    });
    expect(result.runs).to.be.at.least(2);

    const after = await ds.getRepository(Run).findOneByOrFail({ run_id: terminated.run_id });
    expect(after.status).to.equal('ERROR');
    expect(after.completed_at).to.be.instanceOf(Date);
    expect((after.status_detail as { error: string }).error).to.match(/TERMINATED/);
    const events = await ds.getRepository(RunEvent).findBy({ run_id: terminated.run_id });
    expect(events.map((e) => e.type)).to.deep.equal(['StructureRunError']);

    const orphan = await ds.getRepository(Run).findOneByOrFail({ run_id: neverStarted.run_id });
    expect(orphan.status).to.equal('ERROR');
    expect((orphan.status_detail as { error: string }).error).to.match(/does not exist/);

    expect((await ds.getRepository(Run).findOneByOrFail({ run_id: live.run_id })).status).to.equal('RUNNING');
    await liveWorkflow.terminate('test cleanup');

    const d = await ds.getRepository(Deployment).findOneByOrFail({ deployment_id: deployment.deployment_id });
    expect(d.status).to.equal('ERROR');

    // A second pass changes nothing: settled rows are terminal.
    const again = await env.client.workflow.execute('reconcilerWorkflow', {
      taskQueue: config.temporal.taskQueue,
      workflowId: `reconcile-${randomUUID()}`,
      args: [{ olderThanSeconds: 60 }],
    });
    const stillOpen: Array<{ n: string }> = await ds.query(
      `SELECT count(*) AS n FROM runs WHERE run_id = ANY($1) AND status NOT IN ('ERROR')`,
      [[terminated.run_id, neverStarted.run_id]],
    );
    expect(Number(stillOpen[0].n)).to.equal(0);
    expect(again.deployments).to.equal(0);
  });

  it('settles a knowledge base job whose workflow never existed: FAILED, WorkflowClosed', async () => {
    const t = await newTenant();
    const { ds, env, config } = getStack();
    const past = new Date(Date.now() - 5 * 60_000);
    const kb = await ds.getRepository(KnowledgeBase).save({
      knowledge_base_id: randomUUID(),
      organization_id: t.organizationId,
      name: 'kb',
      description: null,
      type: 'gtc_pg_vector',
      config: { gtc_pg_vector: {} },
      asset_paths: [],
      embedding_model: null,
      embedding_dimensions: null,
      created_by: 'test',
      created_at: past,
      updated_at: past,
    });
    const job = await ds.getRepository(KnowledgeBaseJob).save({
      knowledge_base_job_id: randomUUID(),
      knowledge_base_id: kb.knowledge_base_id,
      organization_id: t.organizationId,
      status: 'RUNNING',
      status_detail: null,
      errors: [],
      bytes_ingested: 0,
      created_by: 'test',
      created_at: past,
      updated_at: past,
      completed_at: null,
    });
    const result = await env.client.workflow.execute('reconcilerWorkflow', {
      taskQueue: config.temporal.taskQueue,
      workflowId: `reconcile-${randomUUID()}`,
      args: [{ olderThanSeconds: 60 }],
    });
    expect(result.knowledgeBaseJobs).to.be.at.least(1);
    const after = await ds
      .getRepository(KnowledgeBaseJob)
      .findOneByOrFail({ knowledge_base_job_id: job.knowledge_base_job_id });
    expect(after.status).to.equal('FAILED');
    expect(after.completed_at).to.be.instanceOf(Date);
    expect(after.status_detail).to.include({ reason: 'WorkflowClosed' });
  });

  it('settles an integration delivery whose workflow never existed: FAILED, WorkflowClosed', async () => {
    const { ds, env, config } = getStack();
    const t = await newTenant('reconcile-delivery');
    const past = new Date(Date.now() - 10 * 60_000);
    const integrationId = randomUUID();
    await ds.getRepository(Integration).insert({
      integration_id: integrationId,
      organization_id: t.organizationId,
      name: 'i',
      description: '',
      type: 'codehost_app',
      config: {},
      structure_ids: [],
      assistant_ids: [],
      created_by: 'test',
      created_at: past,
      updated_at: past,
    });
    const deliveryId = randomUUID();
    await ds.query(
      `INSERT INTO integration_deliveries (delivery_id, integration_id, organization_id, received_at, verdict,
         http_status, status, payload, updated_at) VALUES ($1, $2, $3, $4, 'accepted', 200, 'RUNNING', '{}', $4)`,
      [deliveryId, integrationId, t.organizationId, past],
    );
    const result = await env.client.workflow.execute('reconcilerWorkflow', {
      taskQueue: config.temporal.taskQueue,
      workflowId: `reconcile-${randomUUID()}`,
      args: [{ olderThanSeconds: 60 }],
    });
    expect(result.integrationDeliveries).to.be.at.least(1);
    const after = await ds.getRepository(IntegrationDelivery).findOneByOrFail({ delivery_id: deliveryId });
    expect(after.status).to.equal('FAILED');
    expect(after.status_detail).to.include({ reason: 'WorkflowClosed' });
    expect(after.completed_at).to.be.instanceOf(Date);
    expect(after.payload).to.equal(null);
  });
});
