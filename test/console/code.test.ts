// The console's functions and tools pages in a real browser (browser.ts) against the real stack: create one
// from the example project and watch it deploy, execute a function and run a tool activity, see a failed
// build's log, replay a finished run from its page (docs/run-control.md), and connect a remote MCP server as a
// tool, whose listed tools its page shows.
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { as } from '../harness/client';
import { newTenant } from '../harness/stack';
import { config, entriesOf, makeArchive, uploadToNewBucket, waitForDeployment } from '../fixtures/projects';
import { signedInConsole, type ConsoleBrowser } from './browser';
import { startRemoteMcpServer } from '../harness/remote-mcp-server';

const DEPLOYED_MS = 120_000;

describe('console (browser): functions, tools, replay', function () {
  this.timeout(240_000);
  let c: ConsoleBrowser;
  let page: Page;
  let key: string;

  before(async () => {
    key = (await newTenant('console-code')).key;
    c = await signedInConsole(key);
    page = c.page;
  });
  after(async () => {
    await c?.close();
  });

  const createFromExample = async (navLabel: string, name: string) => {
    await page.getByRole('link', { name: navLabel, exact: true }).click();
    await page.getByLabel('Name', { exact: true }).fill(name);
    await page.getByRole('button', { name: 'Create and deploy' }).click();
    await page.getByRole('heading', { name }).waitFor();
    await page
      .getByRole('table', { name: 'Deployments' })
      .locator('[data-status="SUCCEEDED"]')
      .waitFor({ timeout: DEPLOYED_MS });
  };

  it('creates a function, watches it deploy, executes it, opens its run and replays it', async () => {
    await createFromExample('Functions', 'greeter');
    await c.accessible('function');
    await page.getByLabel('JSON body').fill('{"numbers": [1, 2]}');
    await page.getByRole('button', { name: 'Execute' }).click();
    const answer = page.getByLabel('Answer');
    await answer.getByText('Hello from the default function').waitFor({ timeout: 60_000 });
    expect(await answer.textContent()).to.include('"numbers"');
    const run = page.getByRole('table', { name: 'Recent runs' }).locator('tr[data-run-id]').first();
    await run.locator('[data-status="SUCCEEDED"]').waitFor();
    const runId = (await run.getAttribute('data-run-id'))!;
    await c.shot('10-function');

    await run.getByRole('link').click();
    await page.getByRole('heading', { name: /Function run/ }).waitFor();
    await page.getByLabel('Output').getByText('Hello from the default function').waitFor();
    await page.getByRole('button', { name: 'Replay' }).click();
    await page.waitForURL((url) => url.pathname.startsWith('/console/runs/function/') && !url.pathname.endsWith(runId));
    const replayId = page.url().split('/').pop()!;
    await page.getByRole('link', { name: runId }).waitFor(); // "Replay of" the first run
    await page.locator('.page-header [data-status="SUCCEEDED"]').waitFor({ timeout: 60_000 });
    const replayed = await as(key).get(`/api/function-runs/${replayId}`);
    expect(replayed.body).to.include({ replayed_from_run_id: runId, status: 'SUCCEEDED' });
    expect(replayed.body.input.body).to.deep.equal({ numbers: [1, 2] });
    await c.accessible('replayed-run');
    await c.shot('11-function-run-replayed');
  });

  it('creates a tool and runs an activity its OpenAPI document names', async () => {
    await createFromExample('Tools', 'echoer');
    await page
      .getByLabel('Activity', { exact: true })
      .locator('option', { hasText: 'echo' })
      .waitFor({ state: 'attached' });
    expect(await page.getByLabel('Activity', { exact: true }).inputValue()).to.equal('echo');
    await page.getByText('Answers params["text"].').waitFor();
    await page.getByLabel('JSON params').fill('{"text": "hi from the console"}');
    await page.getByRole('button', { name: 'Run activity' }).click();
    const answer = page.getByLabel('Answer');
    await answer.getByText('hi from the console').waitFor({ timeout: 60_000 });
    expect(JSON.parse((await answer.textContent())!)).to.deep.equal({
      type: 'TextArtifact',
      value: 'hi from the console',
    });
    await page.getByRole('table', { name: 'Recent runs' }).locator('[data-status="SUCCEEDED"]').first().waitFor();
    await c.accessible('tool');
    await c.shot('12-tool');
  });

  it("shows a failed build's log", async () => {
    const files = {
      'function_config.yaml': config(
        'nodejs',
        '  main_file: main.js\n',
        '  pre_build_install_script: /scripts/pre.sh\n',
      ),
      'scripts/pre.sh': 'echo "compiling the frobnicator"\necho "frobnicator broke" >&2\nexit 3\n',
      'main.js': 'console.log("never")\n',
    };
    const bucketId = await uploadToNewBucket(key, 'broken.zip', makeArchive('zip', entriesOf(files)));
    const fn = await as(key).post('/api/functions', {
      name: 'broken',
      code: { data_lake: { bucket_id: bucketId, asset_path: 'broken.zip' } },
    });
    expect(fn.status, fn.text).to.equal(201);
    const deployment = await waitForDeployment(key, fn.body.latest_deployment_id);
    expect(deployment.status).to.equal('FAILED');
    await c.open(`/functions/${fn.body.function_id}`);
    const row = page.locator(`tr[data-deployment-id="${deployment.deployment_id}"]`);
    await row.locator('[data-status="FAILED"]').waitFor();
    await row.getByText('ScriptFailed').click();
    const log = row.getByLabel(/Build log of/);
    await log.getByText('compiling the frobnicator').waitFor();
    expect(await log.textContent()).to.include('frobnicator broke');
    expect(await page.getByRole('button', { name: 'Execute' }).isDisabled()).to.equal(true);
    await c.accessible('function-build-failed');
    await c.shot('13-function-build-log');
  });

  it('connects a remote MCP server as a tool with a secret Authorization, and shows the tools it listed', async () => {
    const remote = await startRemoteMcpServer();
    try {
      const secret = await as(key).post('/api/secrets', { name: 'team-mcp-token', value: 'Bearer console' });
      expect(secret.status, secret.text).to.equal(201);
      await page.getByRole('link', { name: 'Tools', exact: true }).click();
      await page.getByLabel('Tool name').fill('Team server');
      await page.getByLabel('Server URL').fill(remote.url);
      await page.getByLabel('Authorization').selectOption({ label: 'secret team-mcp-token' });
      await page.getByRole('button', { name: 'Connect and list its tools' }).click();
      await page.getByRole('heading', { name: 'Team server' }).waitFor();
      const listed = page.getByRole('table', { name: 'Tools of the MCP server' });
      await listed.getByText('Adds a and b.').waitFor({ timeout: DEPLOYED_MS });
      expect(await listed.locator('tbody tr').count()).to.equal(5);
      await page.getByText('test-remote 7.1.0').waitFor();
      await page.getByLabel('Activity', { exact: true }).selectOption('whoami');
      await page.getByLabel('JSON params').fill('{}');
      await page.getByRole('button', { name: 'Run activity' }).click();
      await page.getByLabel('Answer').getByText('Bearer console').waitFor({ timeout: 60_000 });
      await c.accessible('mcp-tool');
      await c.shot('14-mcp-tool');
    } finally {
      await remote.close();
    }
  });
});
