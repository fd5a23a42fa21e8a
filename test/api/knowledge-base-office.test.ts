// Knowledge base ingestion of office documents through HTTP: a Word document, a spreadsheet, a presentation and
// an EPUB made by the test with libraries, and an RTF document it writes, are ingested and queries find their
// words; a broken file of each format is a per-asset InvalidContent error. Limits: a spreadsheet of about
// 45 MB is streamed with bounded memory (by a worker process of its own, whose peak RSS growth is measured), one
// whose text passes MAX_TEXT_CHARS and a document read whole over MAX_INGEST_BYTES are TooLarge, and the job's time limit stops
// a long read (a worker and api of the test's own with KNOWLEDGE_BASE_JOB_TIME_LIMIT_SECONDS=1).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { as, request } from '../harness/client';
import { configWith, getStack, newTenant, startApi, startWorker } from '../harness/stack';
import { Findings } from '../drills/kit';
import { Processes, startWorkerProcess } from '../drills/processes';
import { makeDocx, makeEpub, makePptx, makeXlsx, writeLargeXlsx, writeWordyXlsx } from '../fixtures/office';
import { MAX_TEXT_CHARS } from '../../src/services/knowledge/documents/extraction-error';
import { MAX_INGEST_BYTES } from '../../src/services/knowledge/index/ingest';

type Api = ReturnType<typeof as>;

async function upload(api: Api, bucketId: string, name: string, content: Buffer) {
  expect((await api.put(`/api/buckets/${bucketId}/assets`, { name })).status).to.equal(201);
  const url = await api.post(`/api/buckets/${bucketId}/asset-urls/${name}`, { operation: 'PUT' });
  const put = await request('PUT', url.body.url, undefined, { raw: content });
  expect(put.status, put.text).to.equal(200);
}

/** A knowledge base over `<bucket>/<prefix>`, and its first job once ended. */
async function ingest(api: Api, bucketId: string, prefix: string, timeoutMs = 60_000, fullTextOnly = false) {
  const kb = await api.post('/api/knowledge-bases', {
    name: prefix,
    type: 'gtc_hybrid_sql_pg_vector',
    config: { gtc_hybrid_sql_pg_vector: fullTextOnly ? { use_default_embedding_model: false } : {} },
    asset_paths: [`${bucketId}/${prefix}`],
  });
  expect(kb.status, kb.text).to.equal(201);
  const created = await api.post(`/api/knowledge-bases/${kb.body.knowledge_base_id}/knowledge-base-jobs`);
  expect(created.status, created.text).to.equal(202);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = await api.get(`/api/knowledge-base-jobs/${created.body.knowledge_base_job_id}`);
    if (['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(job.body.status)) return { kb: kb.body, job: job.body };
    if (Date.now() > deadline) throw new Error(`job still ${job.body.status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function topHit(api: Api, kbId: string, query: string) {
  const q = await api.post(`/api/knowledge-bases/${kbId}/query`, { query, query_args: { count: 1 } });
  expect(q.status, q.text).to.equal(200);
  return q.body.entries[0]?.meta;
}

/** A field of /proc/<pid>/status in bytes (0 once the process is gone). */
const statusOf = (pid: number, field: 'VmRSS' | 'VmHWM') => {
  const status = fs.existsSync(`/proc/${pid}/status`) ? fs.readFileSync(`/proc/${pid}/status`, 'utf8') : '';
  return Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
};

/** Process `pid`'s peak RSS growth while `work` runs (VmHWM after a reset where the kernel allows it). */
async function peakRssGrowth<T>(pid: number, work: () => Promise<T>): Promise<{ value: T; growth: number }> {
  const baseline = statusOf(pid, 'VmRSS');
  let hwm = true;
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
  } catch {
    hwm = false;
  }
  let peak = baseline;
  const sampler = setInterval(() => (peak = Math.max(peak, statusOf(pid, 'VmRSS'))), 25);
  try {
    const value = await work();
    if (hwm) peak = Math.max(peak, statusOf(pid, 'VmHWM'));
    return { value, growth: peak - baseline };
  } finally {
    clearInterval(sampler);
  }
}

/** The old-generation heap of the measured worker (MB), and what its RSS may grow by while it ingests. */
const HEAP_MB = 256;
const RSS_GROWTH_LIMIT = 300 * 1e6;

/** An api (in this process) and a worker (in a process of its own, `pid`) with these settings. */
async function platformWith(procs: Processes, settings: Record<string, string>) {
  const queue = `kb-office-${randomUUID().slice(0, 8)}`;
  const config = configWith({ ...settings, TEMPORAL_TASK_QUEUE: queue });
  // SANDBOX=off: this worker runs no user code (knowledge base jobs only), and a sandbox probe under the load of
  // a test run may not answer in time.
  const worker = await startWorkerProcess(procs, 'office-worker', {
    ...settings,
    TEMPORAL_TASK_QUEUE: queue,
    SANDBOX: 'off',
  });
  const api = await startApi(getStack().env.client, 0, config);
  return { baseUrl: api.baseUrl, pid: worker.proc.pid!, worker, close: api.close };
}

describe('knowledge bases: office documents', function () {
  this.timeout(240_000);
  let api: Api;
  let bucketId: string;
  let dir: string;
  let largeXlsx: string;

  before(async () => {
    api = as((await newTenant('office')).key);
    bucketId = (await api.post('/api/buckets', { name: 'office' })).body.bucket_id;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kb-office-'));
    largeXlsx = path.join(dir, 'large.xlsx');
    await writeLargeXlsx(largeXlsx, 45 * 1024 * 1024);
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('ingests docx, xlsx, pptx, EPUB and RTF; a broken file of each is InvalidContent', async () => {
    const files: Record<string, Buffer> = {
      'report.docx': await makeDocx(['Narwhals carry a spiral tusk.', 'They live in Arctic waters.']),
      'fauna.xlsx': await makeXlsx({
        Fauna: [
          ['animal', 'island'],
          ['Quokka', 'Rottnest'],
          ['Kakapo', 'Codfish'],
        ],
      }),
      'deck.pptx': await makePptx([['Capybaras are the largest rodents.'], ['They bathe in rivers of Venezuela.']]),
      'book.epub': await makeEpub('Moths', ['Luna moths have no mouths.', 'Atlas moths are huge.']),
      'letter.rtf': Buffer.from(
        '{\\rtf1\\ansi{\\info{\\title Cats}}Ocelots hunt at {\\b night}.\\par Their coats are spotted.\\par}',
      ),
    };
    for (const [name, bytes] of Object.entries(files)) {
      await upload(api, bucketId, `docs/${name}`, bytes);
      await upload(api, bucketId, `docs/broken-${name}`, bytes.subarray(0, Math.floor(bytes.length / 2)));
    }
    const { kb, job } = await ingest(api, bucketId, 'docs/');
    expect(job.status, JSON.stringify(job)).to.equal('SUCCEEDED');
    const errors = Object.fromEntries(job.errors.map((e: any) => [e.path.slice(bucketId.length + 1), e]));
    expect(Object.keys(errors).sort()).to.deep.equal([
      'docs/broken-book.epub',
      'docs/broken-deck.pptx',
      'docs/broken-fauna.xlsx',
      'docs/broken-letter.rtf',
      'docs/broken-report.docx',
    ]);
    for (const [name, what] of [
      ['broken-book.epub', 'EPUB'],
      ['broken-deck.pptx', 'presentation'],
      ['broken-fauna.xlsx', 'spreadsheet'],
      ['broken-letter.rtf', 'RTF document'],
      ['broken-report.docx', 'Word document'],
    ]) {
      expect(errors[`docs/${name}`]).to.include({ type: 'InvalidContent' });
      expect(errors[`docs/${name}`].message).to.include(`docs/${name} is not a readable ${what}`);
    }
    expect(job.status_detail.stats).to.include({ assets: 10 });

    const id = kb.knowledge_base_id;
    const docx = await topHit(api, id, 'narwhal spiral tusk');
    expect(docx).to.include({ asset_name: 'docs/report.docx', format: 'docx' });
    expect(docx.content).to.include('Narwhals carry a spiral tusk.\n\nThey live in Arctic waters.');
    const xlsx = await topHit(api, id, 'Quokka Rottnest');
    expect(xlsx).to.include({ asset_name: 'docs/fauna.xlsx', format: 'xlsx' });
    // Each chunk starts with its heading line: the file's name, then the sheet's (its `# Fauna` heading).
    expect(xlsx.content).to.equal('fauna › Fauna\n\nanimal,island\nQuokka,Rottnest\nKakapo,Codfish');
    const pptx = await topHit(api, id, 'capybaras rodents Venezuela');
    expect(pptx).to.include({ asset_name: 'docs/deck.pptx', format: 'pptx' });
    expect(pptx.content).to.equal('deck\n\nCapybaras are the largest rodents.\n\nThey bathe in rivers of Venezuela.');
    const epub = await topHit(api, id, 'luna moths mouths');
    expect(epub).to.include({ asset_name: 'docs/book.epub', format: 'epub' });
    expect(epub.content).to.include('Luna moths have no mouths.').and.include('Atlas moths are huge.');
    const rtf = await topHit(api, id, 'ocelots hunt night');
    expect(rtf).to.include({ asset_name: 'docs/letter.rtf', format: 'rtf' });
    expect(rtf.content).to.equal('letter\n\nOcelots hunt at night.\nTheir coats are spotted.');
  });

  it('streams a 45 MB spreadsheet in bounded memory; too much text or too many bytes is TooLarge', async () => {
    const procs = new Processes();
    // The worker's heap is capped: a read that held the workbook (exceljs's Workbook.xlsx.load takes well over a
    // gigabyte for this file) would kill it; a streamed one fits, beside everything else a worker holds.
    const platform = await platformWith(procs, { NODE_OPTIONS: `--max-old-space-size=${HEAP_MB}` });
    try {
      const own = as((await newTenant('office-big')).key, platform.baseUrl);
      const bucket = (await own.post('/api/buckets', { name: 'big' })).body.bucket_id;
      await upload(own, bucket, 'big/large.xlsx', fs.readFileSync(largeXlsx));
      const wordy = path.join(dir, 'wordy.xlsx');
      await writeWordyXlsx(wordy, MAX_TEXT_CHARS + 100_000);
      await upload(own, bucket, 'big/wordy.xlsx', fs.readFileSync(wordy));
      await upload(own, bucket, 'big/over.docx', randomBytes(MAX_INGEST_BYTES + 1));

      // Full text only: the worker process embeds nothing, what is measured is reading the files.
      const { value, growth } = await peakRssGrowth(platform.pid, () =>
        ingest(own, bucket, 'big/', 180_000, true).catch((err: Error) => {
          throw new Error(
            `${err.message}; the worker ${platform.worker.running ? 'runs' : `died:\n${platform.worker.tail()}`}`,
          );
        }),
      );
      const { kb, job } = value;
      expect(platform.worker.running, `the worker died:\n${platform.worker.tail()}`).to.equal(true);
      const size = fs.statSync(largeXlsx).size;
      console.log(
        `      ${Math.round(size / 1e6)} MB spreadsheet: worker peak RSS growth ${Math.round(growth / 1e6)} MB`,
      );
      expect(job.status, JSON.stringify(job)).to.equal('SUCCEEDED');
      const errors = Object.fromEntries(job.errors.map((e: any) => [e.path.slice(bucket.length + 1), e]));
      expect(Object.keys(errors).sort()).to.deep.equal(['big/over.docx', 'big/wordy.xlsx']);
      expect(errors['big/over.docx']).to.include({ type: 'TooLarge' });
      expect(errors['big/over.docx'].message).to.include(`larger than ${MAX_INGEST_BYTES} bytes`);
      expect(errors['big/wordy.xlsx']).to.include({
        type: 'TooLarge',
        message: `big/wordy.xlsx holds more than ${MAX_TEXT_CHARS} characters of text`,
      });
      const hit = await topHit(own, kb.knowledge_base_id, 'marker11000');
      expect(hit).to.include({ asset_name: 'big/large.xlsx', format: 'xlsx' });
      expect(hit.content).to.match(/^large › Ledger\n\nmarker1000\nmarker2000\n/);
      // Streamed, the worker grows by its reading buffers, up to 10 M characters of text and the garbage of the
      // rows read, which V8 collects lazily up to its heap cap.
      expect(growth, "the worker's peak RSS growth while ingesting").to.be.lessThan(RSS_GROWTH_LIMIT);
    } finally {
      await platform.close();
      await procs.stopAll(new Findings('knowledge-base-office', 'cleanup'));
    }
  });

  it('stops reading a spreadsheet at the job time limit', async () => {
    const config = configWith({
      KNOWLEDGE_BASE_JOB_TIME_LIMIT_SECONDS: '1',
      TEMPORAL_TASK_QUEUE: `kb-office-${randomUUID().slice(0, 8)}`,
    });
    const worker = await startWorker(config);
    const ownApi = await startApi(getStack().env.client, 0, config);
    try {
      const t = await newTenant('office-time');
      const timed = as(t.key, ownApi.baseUrl);
      const bucket = (await timed.post('/api/buckets', { name: 'timed' })).body.bucket_id;
      // Eight copies: reading them all takes several times the limit even on a quiet machine, so only a read
      // that the limit stopped ends the job before they are read (one copy can be read within the limit).
      const bytes = fs.readFileSync(largeXlsx);
      for (let i = 0; i < 8; i++) await upload(timed, bucket, `slow/large-${i}.xlsx`, bytes);
      const started = Date.now();
      const { job } = await ingest(timed, bucket, 'slow/', 60_000);
      expect(job.status).to.equal('FAILED');
      expect(job.status_detail).to.include({ reason: 'TimeLimitExceeded' });
      expect(Date.now() - started).to.be.lessThan(15_000);
    } finally {
      await ownApi.close();
      const closing = Date.now();
      await worker.close();
      // The read noticed the cancellation: the worker's shutdown did not wait for the whole file.
      expect(Date.now() - closing).to.be.lessThan(5_000);
    }
  });
});
