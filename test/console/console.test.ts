// The web console (docs/console.md) in a real browser (browser.ts), against the real stack: sign-in, runs
// (live statuses, live logs and events, resumed streams, cancel), structures, knowledge bases, API keys, sign-out.
// Each scenario leaves a screenshot in test-results/console/ and passes an accessibility check. The other
// pages have their own files beside this one.
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { CONSOLE_CSP } from '../../src/api/console/serve-console';
import { structureWithBuild } from '../harness/builds';
import { as } from '../harness/client';
import { PY_PRELUDE, waitForRun } from '../harness/runs';
import { PASSWORD, personWithPassword } from '../harness/people';
import { getStack } from '../harness/stack';
import { upload } from '../fixtures/projects';
import { launchConsole, type ConsoleBrowser } from './browser';

/** Prints `line <i>` and posts a Tick event every `gap` seconds, `n` times (args: n gap). */
const TICKING_PROGRAM = `${PY_PRELUDE}
n, gap = int(sys.argv[1]), float(sys.argv[2])
for i in range(n):
    print("line %d" % i, flush=True)
    call("POST", "api/structure-runs/" + RUN_ID + "/events", {"type": "Tick", "timestamp": time.time(), "payload": {"i": i}})
    time.sleep(gap)
print("done", flush=True)
`;

/** How long a short run may take on a loaded machine (its events go through the api, a request each). */
const RUN_MS = 90_000;

describe('console (browser)', function () {
  this.timeout(120_000);
  let consoleBrowser: ConsoleBrowser;
  let page: Page;
  let key: string;
  let email: string;
  let structureId: string;

  const shot = (name: string) => consoleBrowser.shot(name);
  const accessible = (name: string) => consoleBrowser.accessible(name);
  const startRun = async (args: string[]) => {
    const run = await as(key).post(`/api/structures/${structureId}/runs`, { args });
    expect(run.status, run.text).to.equal(201);
    return run.body.structure_run_id as string;
  };

  before(async function () {
    const tenant = await personWithPassword('console');
    key = tenant.key;
    email = tenant.email;
    ({ structureId } = await structureWithBuild(tenant.organizationId, { files: { 'structure.py': TICKING_PROGRAM } }));
    consoleBrowser = await launchConsole();
    page = consoleBrowser.page;
  });

  after(async () => {
    await consoleBrowser?.close();
  });

  it('is served at /console under a strict CSP, and signs in by email and password with no key in the page', async () => {
    const response = await page.goto(`${getStack().baseUrl}/console`);
    expect(response?.status()).to.equal(200);
    expect(response?.headers()['content-security-policy']).to.equal(CONSOLE_CSP);
    expect(await page.getByText('API key').count()).to.equal(0); // keys are for programs
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('not the password at all');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('alert').getByText('The email or the password is wrong').waitFor();
    await accessible('sign-in');
    await shot('01-sign-in');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    await page.getByRole('link', { name: 'Runs', exact: true }).click();
    await page.getByRole('heading', { name: 'Runs' }).waitFor();
    expect(await page.evaluate('sessionStorage.length')).to.equal(0);
    expect(await page.evaluate('localStorage.length')).to.equal(0);
  });

  it('shows a new run in the list and its status changing live to SUCCEEDED', async () => {
    const runId = await startRun(['3', '0.5']);
    const row = page.locator(`tr[data-run-id="${runId}"]`);
    await row.waitFor({ timeout: 20_000 });
    await row.locator('[data-status="SUCCEEDED"]').waitFor({ timeout: 30_000 });
    await accessible('runs');
    await shot('02-runs');
  });

  it('opens a run and streams its log lines and events while it runs', async () => {
    const runId = await startRun(['8', '0.8']);
    await page.goto(`${getStack().baseUrl}/console/runs?kind=structure`);
    await page.locator(`tr[data-run-id="${runId}"] a`).click();
    await page.getByRole('heading', { name: /Structure run/ }).waitFor();
    const logs = page.getByLabel('Log lines');
    await logs.getByText('line 1').waitFor({ timeout: 30_000 });
    // Seen while the run goes on, not read after its end.
    expect(await page.locator('.page-header [data-status]').getAttribute('data-status')).to.equal('RUNNING');
    expect(await page.getByText('events: live').count()).to.equal(1);
    await shot('03-run-detail-live');
    await page.locator('.page-header [data-status="SUCCEEDED"]').waitFor({ timeout: 30_000 });
    await logs.getByText('done').waitFor();
    await page.getByRole('table', { name: 'Events' }).getByText('Tick').first().waitFor();
    await page.getByText('StructureRunCompleted').first().waitFor();
    expect(await page.getByRole('link', { name: 'Workflow in Temporal UI' }).getAttribute('href')).to.include(
      `/workflows/structure-run-${runId}`,
    );
    await accessible('run-detail');
    await shot('04-run-detail-done');
  });

  it('resumes the event stream with Last-Event-ID after a drop, losing and repeating no event', async () => {
    const runId = await startRun(['3', '0.1']);
    await waitForRun(key, runId, undefined, RUN_MS);
    const events = (await as(key).get(`/api/structure-runs/${runId}/events?limit=100`)).body.events as unknown[];
    // The first event frame of the real stream; served alone, its response then ends without the end frame.
    const stream = await fetch(`${getStack().baseUrl}/api/structure-runs/${runId}/events/stream`, {
      headers: { authorization: `Bearer ${key}` },
    });
    const reader = stream.body!.getReader();
    let text = '';
    const completeBlocks = () => text.split('\n\n').slice(0, -1);
    while (!completeBlocks().some((block) => /^id: /m.test(block)))
      text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    const firstFrame = `${completeBlocks().find((block) => /^id: /m.test(block))}\n\n`;
    const firstId = /^id: (\d+)/m.exec(firstFrame)![1];
    const lastEventIds: Array<string | undefined> = [];
    const endEvents: Array<string | null> = [];
    // The path, whatever the query: the console asks for the end frame (`?end_event=true`).
    const pattern = (url: URL) => url.pathname === `/api/structure-runs/${runId}/events/stream`;
    await page.route(pattern, async (route) => {
      lastEventIds.push(route.request().headers()['last-event-id']);
      endEvents.push(new URL(route.request().url()).searchParams.get('end_event'));
      if (lastEventIds.length === 1)
        return route.fulfill({ status: 200, headers: { 'content-type': 'text/event-stream' }, body: firstFrame });
      return route.continue();
    });
    try {
      await page.goto(`${getStack().baseUrl}/console/runs/structure/${runId}`);
      await page.getByText('events: ended').waitFor({ timeout: 30_000 });
      await page.getByRole('heading', { name: `Events (${events.length})` }).waitFor();
      expect(lastEventIds).to.deep.equal([undefined, firstId]);
      expect(endEvents).to.deep.equal(['true', 'true']);
    } finally {
      await page.unroute(pattern);
    }
  });

  it('cancels a running run', async () => {
    const runId = await startRun(['100', '1']);
    await waitForRun(key, runId, (r) => r.status === 'RUNNING', RUN_MS);
    await page.goto(`${getStack().baseUrl}/console/runs/structure/${runId}`);
    await page.getByLabel('Log lines').getByText('line 0').waitFor({ timeout: 30_000 });
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await page.locator('.page-header [data-status="CANCELLED"]').waitFor({ timeout: 30_000 });
    await page.getByText('StructureRunCancelled').first().waitFor();
    await shot('05-run-cancelled');
  });

  it('creates a structure from the example project, watches it deploy and starts a run from the form', async () => {
    await page.getByRole('link', { name: 'Structures', exact: true }).click();
    await page.getByLabel('Name').fill('example');
    await page.getByRole('button', { name: 'Create and deploy' }).click();
    await page.getByRole('heading', { name: 'example' }).waitFor();
    await page
      .getByRole('table', { name: 'Deployments' })
      .locator('[data-status="SUCCEEDED"]')
      .waitFor({ timeout: 90_000 });
    await accessible('structure');
    await shot('06-structure-deployed');
    // The schedule form below it has a field of the same name.
    const startRun = page.getByRole('region', { name: 'Start a run' });
    await startRun.getByLabel('Arguments, one a line').fill('hello\nconsole');
    await startRun.getByRole('button', { name: 'Start run' }).click();
    await page.getByRole('heading', { name: /Structure run/ }).waitFor();
    await page.locator('.page-header [data-status="SUCCEEDED"]').waitFor({ timeout: 60_000 });
    await page.getByLabel('Output').getByText('hello console').waitFor();
  });

  it('runs a knowledge base job and queries the knowledge base in the playground', async () => {
    const api = as(key);
    const bucketId = (await api.post('/api/buckets', { name: 'docs' })).body.bucket_id as string;
    for (const [name, text] of [
      ['docs/france.txt', 'The capital of France is Paris. Paris lies on the Seine river.'],
      ['docs/iceland.txt', 'Iceland has many active volcanoes and glaciers.'],
    ]) {
      expect((await api.put(`/api/buckets/${bucketId}/assets`, { name })).status).to.equal(201);
      await upload(key, bucketId, name, Buffer.from(text));
    }
    const kb = await api.post('/api/knowledge-bases', {
      name: 'Geography',
      type: 'gtc_hybrid_sql_pg_vector',
      config: { gtc_hybrid_sql_pg_vector: {} },
      asset_paths: [`${bucketId}/docs/`],
    });
    expect(kb.status, kb.text).to.equal(201);

    await page.getByRole('link', { name: 'Knowledge bases' }).click();
    await page.getByRole('link', { name: 'Geography' }).click();
    await page.getByRole('button', { name: 'Run a job' }).click();
    await page.getByRole('table', { name: 'Jobs' }).locator('[data-status="SUCCEEDED"]').waitFor({ timeout: 60_000 });
    await page.getByLabel('Query', { exact: true }).fill('What is the capital of France?');
    await page.getByRole('button', { name: 'Query', exact: true }).click();
    const results = page.getByRole('table', { name: 'Results' });
    await results.waitFor();
    expect(await results.locator('tbody tr').first().textContent()).to.include(`${bucketId}/docs/france.txt`);
    expect(await page.getByText('retrieval hybrid').count()).to.equal(1);
    await accessible('knowledge-base');
    await shot('07-knowledge-base');
  });

  it('creates an API key, shown once, and revokes it', async () => {
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByLabel('New key name').fill('console key');
    await page.getByRole('button', { name: 'Create key' }).click();
    const value = (await page.getByLabel('New key value').textContent())!.trim();
    expect((await as(value).get('/api/users')).status).to.equal(200);
    await accessible('settings');
    await shot('08-settings-key-created');
    await page.getByRole('button', { name: 'Done' }).click();
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Revoke console key' }).click();
    await page.getByRole('button', { name: 'Revoke console key' }).waitFor({ state: 'detached' });
    expect((await as(value).get('/api/users')).status).to.equal(401);
  });

  it('signs out: the session ends and the page holds nothing', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Email').waitFor();
    expect((await page.context().cookies()).find((k) => k.name === 'tarmac_session')).to.equal(undefined);
    expect(await page.evaluate('sessionStorage.length')).to.equal(0);
    await shot('09-signed-out');
  });
});
