// Run control in the console (docs/run-control.md), in a real browser (browser.ts) against the real stack: a
// structure's concurrency queue paused and resumed, its schedules added, paused and deleted (each change
// checked through the public api as well), and a run's keys on its page.
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { structureWithBuild } from '../harness/builds';
import { as } from '../harness/client';
import { ECHO_PROGRAM } from '../harness/runs';
import { newTenant } from '../harness/stack';
import { signedInConsole, type ConsoleBrowser } from './browser';

describe('console (browser): run control', function () {
  this.timeout(120_000);
  let c: ConsoleBrowser;
  let page: Page;
  let tenant: Awaited<ReturnType<typeof newTenant>>;
  let structureId: string;

  before(async () => {
    tenant = await newTenant('console-run-control');
    structureId = (await structureWithBuild(tenant.organizationId, { files: { 'structure.py': ECHO_PROGRAM } }))
      .structureId;
    const limited = await as(tenant.key).patch(`/api/structures/${structureId}`, { concurrency: { limit: 2 } });
    expect(limited.status, limited.text).to.equal(200);
    c = await signedInConsole(tenant.key);
    page = c.page;
  });
  after(async () => {
    await c?.close();
  });

  const queueOf = async () => (await as(tenant.key).get(`/api/structures/${structureId}/queue`)).body;
  const schedulesOf = async () =>
    (await as(tenant.key).get(`/api/structures/${structureId}/schedules`)).body.schedules as Array<{
      schedule_expression: string;
      args: string[];
      enabled: boolean;
    }>;

  it("pauses and resumes a structure's queue, showing its limits", async () => {
    await c.open(`/structures/${structureId}`);
    const queue = page.getByRole('region', { name: 'Queue' });
    await queue.getByText('0 running, 0 queued; at most 2 per key (queue).').waitFor();
    await queue.getByRole('button', { name: 'Pause' }).click();
    await queue.getByTestId('queue-state').filter({ hasText: 'Paused' }).waitFor();
    expect((await queueOf()).paused).to.equal(true);
    await queue.getByRole('button', { name: 'Resume' }).click();
    await queue.getByTestId('queue-state').filter({ hasText: 'Running' }).waitFor();
    expect((await queueOf()).paused).to.equal(false);
  });

  it('adds a schedule with its args, shows its next fire, pauses and deletes it', async () => {
    await c.open(`/structures/${structureId}`);
    const schedules = page.getByRole('region', { name: 'Schedules' });
    await schedules.getByText('No schedule.').waitFor();
    await schedules.getByLabel('When (cron or rate)').fill('rate(1 hour)');
    await schedules.getByLabel('Arguments, one a line').fill('nightly\nreport');
    await schedules.getByRole('button', { name: 'Add schedule' }).click();
    const row = schedules.getByRole('table', { name: 'Schedules' }).locator('tbody tr');
    await row.filter({ hasText: 'rate(1 hour)' }).getByRole('cell', { name: 'Active', exact: true }).waitFor();
    expect(await row.locator('time').count(), 'its next fire time').to.equal(1);
    const [made] = await schedulesOf();
    expect(made).to.include({ schedule_expression: 'rate(1 hour)', enabled: true });
    expect(made.args).to.deep.equal(['nightly', 'report']);
    await c.shot('run-control');
    await c.accessible('run-control');

    await row.getByRole('button', { name: 'Pause' }).click();
    await row.getByRole('cell', { name: 'Paused', exact: true }).waitFor();
    expect((await schedulesOf())[0].enabled).to.equal(false);
    await row.getByRole('button', { name: 'Delete' }).click();
    await schedules.getByText('No schedule.').waitFor();
    expect(await schedulesOf()).to.deep.equal([]);
  });

  it("shows a run's idempotency and concurrency keys on its page", async () => {
    const made = await as(tenant.key).post(
      `/api/structures/${structureId}/runs`,
      { args: ['hello'], concurrency_key: 'customer-42' },
      { headers: { 'Idempotency-Key': 'console-order-1' } },
    );
    expect(made.status, made.text).to.equal(201);
    await c.open(`/runs/structure/${made.body.structure_run_id}`);
    const facts = page.locator('dl.facts');
    await facts.getByText('console-order-1').waitFor();
    await facts.getByText('customer-42').waitFor();
    expect(await facts.locator('dt').allTextContents()).to.include.members(['Idempotency key', 'Concurrency key']);
  });
});
