// The console's data pages in a real browser (browser.ts) against the real stack: a bucket's assets (upload,
// download, delete), a data connector's jobs (run one, see what it copied and its per-item errors), and an
// integration's deliveries (each with the handler's answer, its attempt and what it refused).
import fs from 'node:fs';
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { as, request } from '../harness/client';
import { newTenant } from '../harness/stack';
import { upload } from '../fixtures/projects';
import { signedInConsole, type ConsoleBrowser } from './browser';

describe('console (browser): buckets, data connectors, integrations', function () {
  this.timeout(120_000);
  let c: ConsoleBrowser;
  let page: Page;
  let key: string;

  before(async () => {
    key = (await newTenant('console-data')).key;
    c = await signedInConsole(key);
    page = c.page;
  });
  after(async () => {
    await c?.close();
  });

  it('creates a bucket, uploads a file, downloads it and deletes it', async () => {
    await page.getByRole('link', { name: 'Buckets', exact: true }).click();
    await page.getByLabel('Name').fill('notes');
    await page.getByRole('button', { name: 'Create bucket' }).click();
    await page.getByRole('heading', { name: 'notes' }).waitFor();
    const bucketId = page.url().split('/').pop()!;
    await page
      .getByLabel('File', { exact: true })
      .setInputFiles({ name: 'hello.txt', mimeType: 'text/plain', buffer: Buffer.from('hello, console') });
    await page.getByLabel(/^Asset name/).fill('docs/hello.txt');
    await page.getByRole('button', { name: 'Upload' }).click();
    const row = page.locator('tr[data-asset="docs/hello.txt"]');
    await row.getByText('14 B').waitFor();
    const listed = await as(key).get(`/api/buckets/${bucketId}/assets/docs/hello.txt`);
    expect(listed.body).to.include({ name: 'docs/hello.txt', size: 14 });

    await row.getByRole('button', { name: 'Link to docs/hello.txt' }).click();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      row.getByRole('link', { name: 'Download docs/hello.txt' }).click(),
    ]);
    expect(download.suggestedFilename()).to.equal('hello.txt');
    expect(fs.readFileSync((await download.path())!, 'utf8')).to.equal('hello, console');
    await c.accessible('bucket');
    await c.shot('16-bucket');

    page.once('dialog', (dialog) => void dialog.accept());
    await row.getByRole('button', { name: 'Delete docs/hello.txt' }).click();
    await row.waitFor({ state: 'detached' });
    expect((await as(key).get(`/api/buckets/${bucketId}/assets/docs/hello.txt`)).status).to.equal(404);
  });

  it("runs a data connector's job and shows what it did, errors included", async () => {
    const api = as(key);
    const source = (await api.post('/api/buckets', { name: 'source' })).body.bucket_id as string;
    const target = (await api.post('/api/buckets', { name: 'lake' })).body.bucket_id as string;
    await upload(key, source, 'docs/one.txt', Buffer.from('the first document'));
    const created = await api.post('/api/data-connectors', {
      name: 'Copier',
      type: 'data_lake',
      bucket_id: target,
      config: { data_lake: { bucket_id: source, asset_paths: ['docs/', 'missing.txt'] } },
    });
    expect(created.status, created.text).to.equal(201);
    await page.getByRole('link', { name: 'Data connectors', exact: true }).click();
    await page.getByRole('link', { name: 'Copier' }).click();
    await page.getByRole('heading', { name: 'Copier' }).waitFor();
    const jobs = page.getByRole('table', { name: 'Data jobs' });
    await jobs.locator('[data-status="SUCCEEDED"]').first().waitFor({ timeout: 60_000 });
    await page.getByRole('button', { name: 'Run a job' }).click();
    await jobs.locator('tbody tr').nth(1).waitFor();
    await jobs.locator('tbody tr').first().locator('[data-status="SUCCEEDED"]').waitFor({ timeout: 60_000 });
    expect(await jobs.locator('tbody tr').count()).to.equal(2);
    await jobs.getByText(`No uploaded asset missing.txt in bucket ${source}`).first().waitFor();
    await c.accessible('data-connector');
    await c.shot('17-data-connector');
  });

  it("lists an integration's deliveries: the answer to each, repeated deliveries as attempts, refusals", async () => {
    const api = as(key);
    const hook = await api.post('/api/integrations', { name: 'inbound', type: 'webhook', config: { webhook: {} } });
    expect(hook.status, hook.text).to.equal(201);
    const handler = `/api/integrations/${hook.body.integration_id}/handler`;
    const deliveryKey = randomUUID();
    const headers = { 'idempotency-key': deliveryKey };
    expect((await request('POST', handler, { n: 1 }, { key, headers })).status).to.equal(200);
    expect((await request('POST', handler, { n: 1 }, { key, headers })).status).to.equal(200);
    expect((await request('POST', handler, { n: 2 })).status).to.equal(401);

    await page.getByRole('link', { name: 'Integrations', exact: true }).click();
    await page.getByRole('link', { name: 'inbound' }).click();
    const deliveries = page.getByRole('table', { name: 'Deliveries' });
    await deliveries.locator('tbody tr').nth(2).waitFor();
    const rows = await deliveries.locator('tbody tr').all();
    const cells = await Promise.all(rows.map(async (r) => (await r.locator('td').allTextContents()).slice(2, 4)));
    expect(cells).to.deep.equal([
      ['401 unauthorized', '1 of 1'],
      ['200 duplicate', `2 of 2${deliveryKey}`],
      ['200 accepted', `1 of 2${deliveryKey}`],
    ]);
    await c.accessible('integration');
    await c.shot('18-integration');
  });
});
