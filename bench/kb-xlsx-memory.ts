// kb-xlsx-memory: does a large spreadsheet keep the worker's memory flat (issue 29)? For each size of
// --xlsx-mb, a workbook of about that many MB is written with exceljs's streaming writer (a stored zip, so its
// bytes are its XML; cached in the system's temporary directory between runs): rows of a number, a short
// inline string and a decimal, about 0.3 characters of text a byte, so 10 MB yields about 3 M characters
// (read, chunked and indexed) and 100 MB more than the 10 M-character cap (an honest TooLarge for the asset,
// the read stopped at the cap). Each is ingested by a knowledge base job (full text only: what is measured is
// reading, not the embedding double) through the api and the worker process, and the worker's peak RSS growth
// during the job is printed as a figure (VmHWM after clear_refs, else VmRSS sampled every 25 ms). The ratio:
// the job's MB/s against a bare read of the same blob (extractDocument and chunkText in this process).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { assetBlobKey } from '../src/blobs/keys';
import { chunkText } from '../src/services/knowledge/documents/chunking';
import { extractDocument } from '../src/services/knowledge/documents/extract';
import { MAX_TEXT_CHARS } from '../src/services/knowledge/documents/extraction-error';
import type { BenchContext } from './support/context';
import { figure, table, type BenchReport, type Figure, type Ratio } from './support/stats';

/** The worker's peak RSS growth a streamed read may cost (its text at the cap, chunking, buffers). */
const GROWTH_GOAL_MB = 300;

async function writeRows(file: string, rows: number): Promise<void> {
  const book = new ExcelJS.stream.xlsx.WorkbookWriter({
    filename: file,
    useSharedStrings: false,
    useStyles: false,
    zip: { store: true },
  });
  const sheet = book.addWorksheet('Ledger');
  for (let i = 1; i <= rows; i++) sheet.addRow([i, `entry ${i} of the ledger ${i % 97}`, i * 0.25]).commit();
  sheet.commit();
  await book.commit();
}

/** A workbook of about `mb` MB, written once (a sample sets the bytes per row). */
export async function workbookOf(mb: number): Promise<string> {
  const file = path.join(os.tmpdir(), `tarmac-bench-ledger-${mb}mb.xlsx`);
  if (fs.existsSync(file)) return file;
  const sample = `${file}.sample`;
  await writeRows(sample, 20_000);
  const perRow = fs.statSync(sample).size / 20_000;
  fs.rmSync(sample);
  await writeRows(`${file}.part`, Math.ceil((mb * 1e6) / perRow));
  fs.renameSync(`${file}.part`, file);
  return file;
}

const statusOf = (pid: number, field: 'VmRSS' | 'VmHWM') => {
  const status = fs.existsSync(`/proc/${pid}/status`) ? fs.readFileSync(`/proc/${pid}/status`, 'utf8') : '';
  return Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
};

/** Process `pid`'s RSS before `work` and its peak while `work` runs. */
async function peakRss<T>(pid: number, work: () => Promise<T>): Promise<{ value: T; before: number; peak: number }> {
  const before = statusOf(pid, 'VmRSS');
  let hwm = true;
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
  } catch {
    hwm = false;
  }
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, statusOf(pid, 'VmRSS'))), 25);
  try {
    const value = await work();
    if (hwm) peak = Math.max(peak, statusOf(pid, 'VmHWM'));
    return { value, before, peak };
  } finally {
    clearInterval(sampler);
  }
}

async function upload(ctx: BenchContext, bucketId: string, name: string, file: string): Promise<void> {
  await ctx.http('PUT', `/api/buckets/${bucketId}/assets`, { name });
  const url = await ctx.http('POST', `/api/buckets/${bucketId}/asset-urls/${name}`, { operation: 'PUT' });
  const put = await fetch(url.body.url, {
    method: 'PUT',
    body: fs.createReadStream(file) as unknown as ReadableStream,
    duplex: 'half',
  } as RequestInit);
  if (put.status !== 200) throw new Error(`upload ${name}: ${put.status} ${await put.text()}`);
}

async function runJob(ctx: BenchContext, bucketId: string, name: string) {
  const kb = await ctx.http('POST', '/api/knowledge-bases', {
    name: `bench-xlsx-${name}`,
    type: 'gtc_hybrid_sql_pg_vector',
    config: { gtc_hybrid_sql_pg_vector: { use_default_embedding_model: false } },
    asset_paths: [`${bucketId}/${name}`],
  });
  if (kb.status !== 201) throw new Error(`create knowledge base: ${kb.status} ${JSON.stringify(kb.body)}`);
  const created = await ctx.http('POST', `/api/knowledge-bases/${kb.body.knowledge_base_id}/knowledge-base-jobs`);
  let job = created.body;
  while (['QUEUED', 'RUNNING'].includes(job.status)) {
    await new Promise((r) => setTimeout(r, 50));
    job = (await ctx.http('GET', `/api/knowledge-base-jobs/${job.knowledge_base_job_id}`)).body;
  }
  return job;
}

/** The bare read: the same blob through extractDocument and chunkText, in this process. */
async function bareRead(ctx: BenchContext, bucketId: string, name: string): Promise<string> {
  const blob = (await ctx.stack.activityDeps.blobs.get(assetBlobKey(bucketId, name)))!;
  try {
    return `${chunkText((await extractDocument(name, blob.stream)).text).length} chunks`;
  } catch (err) {
    return `${(err as { type?: string }).type ?? 'Error'}`;
  }
}

export async function kbXlsxMemory(ctx: BenchContext): Promise<BenchReport> {
  const pid = ctx.production?.probes.find((p) => p.name === 'worker')?.pid;
  if (!pid) throw new Error('kb-xlsx-memory measures the worker process: run it in the production shape');
  const bucketId: string = (await ctx.http('POST', '/api/buckets', { name: `bench-xlsx-${Date.now()}` })).body
    .bucket_id;
  const rows: Array<Array<string | number>> = [];
  const ratios: Ratio[] = [];
  const figures: Figure[] = [];
  const data: Record<string, unknown> = {};
  for (const mb of ctx.options.xlsxMb) {
    const file = await workbookOf(mb);
    const bytes = fs.statSync(file).size;
    const name = `ledger-${mb}mb.xlsx`;
    await upload(ctx, bucketId, name, file);
    const t0 = Date.now();
    const { value: job, before, peak } = await peakRss(pid, () => runJob(ctx, bucketId, name));
    const oursSeconds = (Date.now() - t0) / 1000;
    // A job that fails (a heartbeat timeout on a loaded machine) is a result too: its RSS was still measured.
    const error =
      job.status === 'SUCCEEDED' ? job.errors?.[0] : { type: job.status, message: job.status_detail?.message };
    const outcome = error ? `${error.type}: ${error.message}` : `${job.status_detail.stats.chunks} chunks`;
    const t1 = Date.now();
    const bare = await bareRead(ctx, bucketId, name);
    const bareSeconds = (Date.now() - t1) / 1000;
    const growthMb = (peak - before) / 1e6;
    rows.push([
      (bytes / 1e6).toFixed(1),
      outcome,
      bare,
      (before / 1e6).toFixed(0),
      (peak / 1e6).toFixed(0),
      growthMb.toFixed(0),
      oursSeconds.toFixed(1),
      bareSeconds.toFixed(1),
    ]);
    figures.push(
      figure('kb-xlsx-memory', `worker peak RSS growth, ${mb} MB workbook`, growthMb, 'MB', {
        max: GROWTH_GOAL_MB,
        below: true,
      }),
    );
    ratios.push({
      bench: 'kb-xlsx-memory',
      metric: `MB/s at ${mb} MB`,
      ours: bytes / 1e6 / oursSeconds,
      bare: bytes / 1e6 / bareSeconds,
      unit: 'MB/s',
    });
    data[String(mb)] = { bytes, outcome, bare, before, peak, oursSeconds, bareSeconds };
  }
  return {
    name: 'kb-xlsx-memory',
    tables: [
      table(
        'kb-xlsx-memory: a knowledge base job over one workbook (full text only), the worker process measured',
        ['MB', 'ours (job)', 'bare', 'RSS before MB', 'peak MB', 'growth MB', 'ours s', 'bare s'],
        rows,
      ),
    ],
    ratios,
    figures,
    notes: [
      `text past ${MAX_TEXT_CHARS} characters is the asset's TooLarge error (the read stops at the cap); memory must stay flat up to it`,
      'bare: extractDocument + chunkText of the same blob in the bench process (to the same cap), no database writes',
    ],
    data,
  };
}
