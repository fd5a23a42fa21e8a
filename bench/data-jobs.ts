// 5. Data jobs. (a) data_lake ingestion of N small objects: a data job (list, version check, read, sha256,
// blob write, asset upsert with metadata, through the workflow and its heartbeating activity) against a bare
// loop doing the same reads and blob writes and one plain INSERT per object, on the same blob store and
// PostgreSQL; objects/s for each N (the per-object cost should stay flat). (b) webscraper against a local site
// of P pages linked from one index: pages/s of a job (robots.txt, SSRF checks, Readability, asset writes, at
// DATA_CONNECTOR_FETCH_CONCURRENCY) against bare fetches of the same pages with the same concurrency, each
// written as a blob, and against the floor: the same bare loop that also extracts each page's text.
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { assetBlobKey } from '../src/blobs/keys';
import { FsBlobStore } from '../src/blobs/fs-blob-store';
import { readPage } from '../src/services/data-connectors/sources/html-text';
import { htmlPage, startLocalSite } from '../test/harness/local-site';
import type { BenchContext } from './support/context';
import { BenchReport, pool, Ratio, sleep, table } from './support/stats';

const OBJECT_COUNTS = [100, 1000];
const PAGES = 200;
const OBJECT_BYTES = 512;

async function jobSeconds(ctx: BenchContext, jobId: string): Promise<number> {
  for (;;) {
    const job = await ctx.http('GET', `/api/data-jobs/${jobId}`);
    if (job.body.status === 'SUCCEEDED') {
      return (new Date(job.body.completed_at).getTime() - new Date(job.body.created_at).getTime()) / 1000;
    }
    if (['FAILED', 'CANCELLED'].includes(job.body.status))
      throw new Error(`data job ${jobId}: ${JSON.stringify(job.body)}`);
    await sleep(50);
  }
}

/** A bucket of `n` objects of OBJECT_BYTES, written straight into the blob store and the assets table. */
async function bucketOf(ctx: BenchContext, n: number): Promise<string> {
  const { ds, config } = ctx.stack;
  const blobs = new FsBlobStore(config.blobDir);
  const bucket = await ctx.http('POST', '/api/buckets', { name: `bench-${n}` });
  const bucketId = bucket.body.bucket_id as string;
  const names = Array.from({ length: n }, (_, i) => `objects/${String(i).padStart(6, '0')}.txt`);
  await pool(names, 16, (name) =>
    blobs.put(assetBlobKey(bucketId, name), Readable.from([Buffer.alloc(OBJECT_BYTES, name)]), 1 << 20),
  );
  await ds.query(
    `INSERT INTO assets (bucket_id, name, organization_id, size, created_by, created_at, updated_at)
     SELECT b.bucket_id, n, b.organization_id, $3, 'bench', now(), now() FROM buckets b, unnest($2::text[]) n
     WHERE b.bucket_id = $1`,
    [bucketId, names, OBJECT_BYTES],
  );
  return bucketId;
}

/** The bare loop: read each object, write it under another key, one INSERT per object. */
async function bareCopy(ctx: BenchContext, bucketId: string, targetId: string): Promise<number> {
  const { ds, config } = ctx.stack;
  const blobs = new FsBlobStore(config.blobDir);
  const t0 = Date.now();
  const rows: Array<{ name: string }> = await ds.query(`SELECT name FROM assets WHERE bucket_id = $1 ORDER BY name`, [
    bucketId,
  ]);
  for (const { name } of rows) {
    const blob = (await blobs.get(assetBlobKey(bucketId, name)))!;
    const parts: Buffer[] = [];
    for await (const p of blob.stream) parts.push(p as Buffer);
    const body = Buffer.concat(parts);
    const target = `bare/${name}`;
    await blobs.put(assetBlobKey(targetId, target), Readable.from([body]), 1 << 20);
    await ds.query(
      `INSERT INTO assets (bucket_id, name, organization_id, size, created_by, created_at, updated_at)
       SELECT bucket_id, $2, organization_id, $3, 'bench', now(), now() FROM buckets WHERE bucket_id = $1
       ON CONFLICT (bucket_id, name) DO UPDATE SET size = EXCLUDED.size`,
      [targetId, target, body.length],
    );
  }
  return (Date.now() - t0) / 1000;
}

export async function dataJobs(ctx: BenchContext): Promise<BenchReport> {
  const ratios: Ratio[] = [];
  const rows: Array<Array<string | number>> = [];
  for (const n of OBJECT_COUNTS) {
    const source = await bucketOf(ctx, n);
    const target = (await ctx.http('POST', '/api/buckets', { name: `bench-target-${n}` })).body.bucket_id as string;
    const created = await ctx.http('POST', '/api/data-connectors', {
      name: `bench ${n}`,
      type: 'data_lake',
      bucket_id: target,
      config: { data_lake: { bucket_id: source } },
    });
    if (created.status !== 201) throw new Error(JSON.stringify(created.body));
    const ours = await jobSeconds(ctx, created.body.data_job_id);
    const bare = await bareCopy(ctx, source, target);
    rows.push([
      n,
      (n / ours).toFixed(0),
      (n / bare).toFixed(0),
      ((ours / n) * 1000).toFixed(2),
      ((bare / n) * 1000).toFixed(2),
    ]);
    ratios.push({
      bench: 'data-jobs',
      metric: `data_lake ${n} objects/s`,
      ours: n / ours,
      bare: n / bare,
      unit: 'objects/s',
    });
  }

  const site = await startLocalSite({ '/robots.txt': ['text/plain', 'User-agent: *\nAllow: /\n'] });
  const text = 'A paragraph long enough to be taken for the main content of a page of this benchmark site.';
  const links = Array.from({ length: PAGES }, (_, i) => `/p/${i}.html`);
  links.forEach((l, i) => site.pages.set(l, ['text/html', htmlPage(`Page ${i}`, [text, text, text])]));
  site.pages.set('/index.html', ['text/html', htmlPage('Index', [text], links)]);
  const scraper = await ctx.http('POST', '/api/data-connectors', {
    name: 'bench site',
    type: 'webscraper',
    config: { webscraper: { urls: [`${site.url}/index.html`], max_depth: 1, max_pages: PAGES + 1 } },
  });
  if (scraper.status !== 201) throw new Error(JSON.stringify(scraper.body));
  const oursPages = (PAGES + 1) / (await jobSeconds(ctx, scraper.body.data_job_id));
  const blobs = new FsBlobStore(ctx.stack.config.blobDir);
  const bareBucket = randomUUID();
  const t0 = Date.now();
  await pool(['/index.html', ...links], ctx.stack.config.dataConnectors.fetchConcurrency, async (p) => {
    const body = Buffer.from(await (await fetch(site.url + p)).arrayBuffer());
    await blobs.put(assetBlobKey(bareBucket, p), Readable.from([body]), 1 << 20);
  });
  const barePages = (PAGES + 1) / ((Date.now() - t0) / 1000);
  // The floor of a scraper: the bare loop plus the text and link extraction every page needs (readPage,
  // Readability), in this process, without robots.txt, address checks, asset rows or the job around it.
  const t1 = Date.now();
  await pool(['/index.html', ...links], ctx.stack.config.dataConnectors.fetchConcurrency, async (p) => {
    const body = Buffer.from(await (await fetch(site.url + p)).arrayBuffer());
    const text = readPage(body.toString('utf8'), site.url + p).text;
    await blobs.put(assetBlobKey(bareBucket, `floor${p}.txt`), Readable.from([Buffer.from(text)]), 1 << 20);
  });
  const floorPages = (PAGES + 1) / ((Date.now() - t1) / 1000);
  await blobs.deletePrefix(`buckets/${bareBucket}`);
  await site.close();
  ratios.push({
    bench: 'data-jobs',
    metric: `webscraper ${PAGES + 1} pages/s`,
    ours: oursPages,
    bare: barePages,
    unit: 'pages/s',
  });
  ratios.push({
    bench: 'data-jobs',
    metric: `webscraper ${PAGES + 1} pages/s against the floor (bare + extraction)`,
    ours: oursPages,
    bare: floorPages,
    unit: 'pages/s',
  });

  return {
    name: 'data-jobs',
    tables: [
      table(
        'data_lake ingestion (one job vs a bare read/write/INSERT loop)',
        ['objects', 'ours obj/s', 'bare obj/s', 'ours ms/obj', 'bare ms/obj'],
        rows,
      ),
      table(
        'webscraper (local site)',
        ['pages', 'ours pages/s', 'bare pages/s', 'floor pages/s (bare + extraction)'],
        [[PAGES + 1, oursPages.toFixed(1), barePages.toFixed(1), floorPages.toFixed(1)]],
      ),
    ],
    ratios,
    notes: [
      'ours includes the workflow start, the status writes, the version check, sha256 and asset metadata per object',
      'the bare webscraper neither reads robots.txt, checks addresses nor extracts text; the floor adds the extraction',
    ],
    data: { rows, oursPages, barePages, floorPages },
  };
}
