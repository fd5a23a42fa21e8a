// The console's dashboard and organization settings in a real browser (browser.ts) against the real stack:
// runs per status over time, counts, recent failures and queue depths; members, invites sent and withdrawn.
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { structureWithBuild } from '../harness/builds';
import { as } from '../harness/client';
import { waitForRun } from '../harness/runs';
import { newTenant } from '../harness/stack';
import { signedInConsole, type ConsoleBrowser } from './browser';

/** Exits with the code given as its first argument. */
const EXIT_PROGRAM = `import sys\nprint("exiting with", sys.argv[1])\nsys.exit(int(sys.argv[1]))\n`;

describe('console (browser): dashboard and organization', function () {
  this.timeout(120_000);
  let c: ConsoleBrowser;
  let page: Page;
  let tenant: Awaited<ReturnType<typeof newTenant>>;

  before(async () => {
    tenant = await newTenant('console-org');
    c = await signedInConsole(tenant.key);
    page = c.page;
  });
  after(async () => {
    await c?.close();
  });

  it('shows runs per status over time, the latest failures and queue depths', async () => {
    const { structureId } = await structureWithBuild(tenant.organizationId, {
      files: { 'structure.py': EXIT_PROGRAM },
    });
    const start = async (code: string) =>
      (await as(tenant.key).post(`/api/structures/${structureId}/runs`, { args: [code] })).body
        .structure_run_id as string;
    const ok = await start('0');
    const failed = await start('3');
    expect((await waitForRun(tenant.key, ok, undefined, 90_000)).status).to.equal('SUCCEEDED');
    expect((await waitForRun(tenant.key, failed, undefined, 90_000)).status).to.equal('FAILED');

    await c.open('/dashboard');
    await page.getByLabel('Window').selectOption({ label: 'Last hour' });
    await page.locator('[data-count="FAILED"]', { hasText: '1' }).waitFor();
    expect(await page.locator('[data-count="SUCCEEDED"]').textContent()).to.equal('1');
    expect(await page.locator('[data-count="QUEUED"]').textContent()).to.equal('0');
    const chart = page.getByRole('img', { name: /Runs per status: 2 runs in \d+ bars/ });
    await chart.waitFor();
    expect(await chart.locator('rect[data-status="FAILED"]').count()).to.equal(1);
    expect(await chart.locator('rect[data-status="SUCCEEDED"]').count()).to.equal(1);
    await page.getByRole('table', { name: 'Recent failures' }).locator(`tr[data-run-id="${failed}"]`).waitFor();
    expect(await page.locator('[data-queued="structure"]').textContent()).to.equal('0');
    await page.getByText('Error rate 50.0 %').waitFor();
    await c.accessible('dashboard');
    await c.shot('19-dashboard');
  });

  it('lists the members, sends an invite and withdraws it', async () => {
    await page.getByRole('link', { name: 'Settings', exact: true }).click();
    await page.getByRole('table', { name: 'Members' }).getByText(tenant.email).waitFor();
    await page.getByLabel('Email to invite').fill('newcomer@example.test');
    await page.getByRole('button', { name: 'Invite', exact: true }).click();
    const invites = page.getByRole('table', { name: 'Invites' });
    await invites.getByText('newcomer@example.test').waitFor();
    await invites.locator('[data-status="PENDING"]').waitFor();
    // No mail is sent: the link is shown once, to pass on.
    const shown = await page.getByLabel('Pass this link on to newcomer@example.test').inputValue();
    expect(shown).to.match(/\/console\/accept-invite#token=[A-Za-z0-9_-]{43}$/);
    const listed = await as(tenant.key).get(`/api/organizations/${tenant.organizationId}/invites`);
    expect(listed.body.invites.map((i: any) => [i.email, i.status])).to.deep.equal([
      ['newcomer@example.test', 'PENDING'],
    ]);
    await c.accessible('settings-organization');
    await c.shot('20-settings-organization');
    await page.getByRole('button', { name: 'Withdraw the invite of newcomer@example.test' }).click();
    await invites.getByText('newcomer@example.test').waitFor({ state: 'detached' });
    const after = await as(tenant.key).get(`/api/organizations/${tenant.organizationId}/invites`);
    expect(after.body.invites).to.deep.equal([]);
  });
});
