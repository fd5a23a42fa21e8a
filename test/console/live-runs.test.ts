// Lists of runs kept live in the console, in a real browser (browser.ts) against the real stack: a listed run's
// status changes in place from the organization's stream of run changes (no reload, no re-read of the list), a
// new run appears, and with the stream refused the list falls back to re-reading itself. And a run's page
// shows its attempt and the limits it executes under.
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { Run } from '../../src/persistence/entities/run';
import { RUN_JOB } from '../../src/jobs/kinds';
import { transition } from '../../src/jobs/transition';
import { structureWithoutBuild } from '../harness/builds';
import { aRun } from '../harness/runs';
import { getStack, newTenant } from '../harness/stack';
import { signedInConsole, type ConsoleBrowser } from './browser';

describe('console (browser): live lists of runs', function () {
  this.timeout(120_000);
  let c: ConsoleBrowser;
  let page: Page;
  let org: string;
  let structureId: string;

  before(async () => {
    const tenant = await newTenant('console-live-runs');
    org = tenant.organizationId;
    structureId = await structureWithoutBuild(org);
    c = await signedInConsole(tenant.key);
    page = c.page;
  });
  after(async () => {
    await c?.close();
  });

  /** A QUEUED structure run written directly (its status then moved by the one guarded transition). */
  const queuedRun = async () => {
    const run = aRun({ kind: 'structure', organization_id: org, resource_id: structureId });
    await getStack().ds.getRepository(Run).save(run);
    return run.run_id;
  };
  const statusOf = (runId: string) =>
    page.getByRole('table', { name: 'Runs' }).locator(`tr[data-run-id="${runId}"] [data-status]`);
  const listReads = () => {
    const reads: string[] = [];
    page.on('request', (r) => {
      if (new URL(r.url()).pathname === '/api/runs') reads.push(r.url());
    });
    return reads;
  };

  it("changes a run's status in the list as it happens, without reload or re-reading the list; shows a new run", async () => {
    const runId = await queuedRun();
    await c.open('/runs');
    await page.getByTestId('runs-live').filter({ hasText: 'live' }).waitFor();
    await statusOf(runId).filter({ hasText: 'QUEUED' }).waitFor();
    const reads = listReads();

    await transition(getStack().ds, RUN_JOB, runId, 'STARTING');
    await statusOf(runId).filter({ hasText: 'STARTING' }).waitFor({ timeout: 5000 });
    await transition(getStack().ds, RUN_JOB, runId, 'RUNNING', { started_at: new Date() });
    await statusOf(runId).filter({ hasText: 'RUNNING' }).waitFor({ timeout: 5000 });
    await transition(getStack().ds, RUN_JOB, runId, 'SUCCEEDED', { completed_at: new Date() });
    await statusOf(runId).filter({ hasText: 'SUCCEEDED' }).waitFor({ timeout: 5000 });
    expect(reads, 'a listed run changes in place').to.deep.equal([]);

    const newRunId = await queuedRun();
    await statusOf(newRunId).filter({ hasText: 'QUEUED' }).waitFor({ timeout: 5000 });
    expect(reads.length, 'a new run: the list is read again').to.be.at.least(1);
    await c.shot('runs-live');
    await c.accessible('runs-live');
  });

  it('re-reads the list itself while the stream is refused', async () => {
    await page.route('**/api/runs/stream', (route) => route.abort());
    try {
      const runId = await queuedRun();
      await c.open('/runs');
      await page.getByTestId('runs-live').filter({ hasText: 'refreshing' }).waitFor();
      await statusOf(runId).filter({ hasText: 'QUEUED' }).waitFor();
      await transition(getStack().ds, RUN_JOB, runId, 'CANCELLED');
      await statusOf(runId).filter({ hasText: 'CANCELLED' }).waitFor({ timeout: 10_000 });
    } finally {
      await page.unroute('**/api/runs/stream');
    }
  });

  it("shows a run's attempt and the limits it executes under on its page", async () => {
    const runId = await queuedRun();
    await c.open(`/runs/structure/${runId}`);
    const facts = page.locator('dl.facts');
    await facts.getByTestId('attempt').filter({ hasText: '1' }).waitFor();
    const { runJob, runLimits, sandbox } = getStack().config;
    const limits = facts.getByTestId('limits');
    await limits.filter({ hasText: `time ${runJob.timeLimitSeconds} s` }).waitFor();
    const text = await limits.textContent();
    expect(text).to.contain(`memory ${runLimits.memoryMb} MiB`);
    expect(text).to.contain(`sandbox ${sandbox.mode}`);
    if (sandbox.mode === 'on') expect(text).to.contain(`${sandbox.maxProcesses} processes`);
    // Not started: today's settings, said as such (the worker records its own when the run starts).
    expect(text).to.contain("today's settings");
    await c.shot('run-limits');
  });
});
