// Hostile documents (issue 41): each crafted file is the one asset of a knowledge base, ingested by a job on a
// worker process of the drill's own (two extraction threads, a 512 MB heap cap each: one organization holds at
// most one of them) while another organization's
// knowledge base job runs beside it. Zip bombs with honest sizes, with 32-bit sizes of 2 GiB and more, with
// zip64 sizes past 4 GiB and with lying local and central headers (docx, pptx, EPUB); XML of the shortest
// paragraphs under the size cap; a slide and a chapter listed thousands of times; nesting past the cap;
// external entities and billion laughs; a PDF whose one stream inflates to gigabytes. It holds when the worker
// is the same process throughout, its RSS grows by at most EXTRACTION_MEMORY_MB + 300 MB, every job ends
// FAILED with its reason (or SUCCEEDED within the caps, reading nothing it should not), and the other
// organization's jobs all succeed, at full size within 3× their quiet time plus 2 s (a latency ratio, which a
// busy machine makes noisy: the quick drill only reports it).
import { as } from '../../harness/client';
import {
  deepDocx,
  docxBomb,
  entityDocx,
  epubAmplified,
  pdfStreamBomb,
  pptxAmplified,
  zipOf,
} from '../../harness/document-bombs';
import { uploadText } from '../../harness/knowledge-bases';
import { newTenant } from '../../harness/stack';
import { Findings, sleep } from '../kit';
import { Processes, startApiProcess, startWorkerProcess } from '../processes';
import { rssGrowthDuring, type MachineAttack, type MachineAttackContext } from './kit';

const MEMORY_MB = 512;
const THREADS = 2;
/** Only the hostile organization's thread does heavy work: the other's reads a small Markdown file. */
const RSS_BOUND = (MEMORY_MB + 300) * 1024 * 1024;
const GiB = 1024 ** 3;
/** 1 MB of the shortest paragraphs WordprocessingML has. */
const SHORT_PARAGRAPHS = '<w:p><w:r><w:t>ab</w:t></w:r></w:p>'.repeat(29_000);

interface Crafted {
  what: string;
  name: string;
  make: () => Buffer;
  /** The job's ending that holds: FAILED with this asset error type, or SUCCEEDED. */
  expect: string;
  /** In the quick drill too. */
  quick?: boolean;
}

/** A zip whose first part a reader opens inflates to 3 GB while both its headers say 1,000 bytes. */
const lyingZip = (part: string) => () =>
  zipOf([{ name: part, body: 'x'.repeat(1024 * 1024), times: 3000, declared: 1000 }]);

const CRAFTED: Crafted[] = [
  {
    what: 'docx inflating to 3 GB, honest sizes',
    name: 'honest.docx',
    make: () => docxBomb(3000, { paragraph: SHORT_PARAGRAPHS }),
    expect: 'TooLarge',
  },
  {
    what: 'docx declaring 2 GiB + 7 (32-bit)',
    name: 'negative.docx',
    make: () => docxBomb(300, { paragraph: SHORT_PARAGRAPHS, declared: 2 ** 31 + 7 }),
    expect: 'TooLarge',
    quick: true,
  },
  {
    what: 'docx declaring 5 GiB (zip64)',
    name: 'zip64.docx',
    make: () => docxBomb(300, { paragraph: SHORT_PARAGRAPHS, declared: 5 * GiB }),
    expect: 'TooLarge',
  },
  {
    what: 'docx inflating to 3 GB, headers say 1,000',
    name: 'lies.docx',
    make: () => docxBomb(3000, { paragraph: SHORT_PARAGRAPHS, declared: 1000 }),
    expect: 'InvalidContent',
    quick: true,
  },
  {
    what: 'pptx slide inflating to 3 GB, headers say 1,000',
    name: 'lies.pptx',
    make: lyingZip('ppt/_rels/presentation.xml.rels'),
    expect: 'InvalidContent',
  },
  {
    what: 'EPUB container inflating to 3 GB, headers say 1,000',
    name: 'lies.epub',
    make: lyingZip('META-INF/container.xml'),
    expect: 'InvalidContent',
  },
  {
    what: 'docx of 95 MB of the shortest paragraphs (a DOM would be 4-12 GB)',
    name: 'short.docx',
    make: () => docxBomb(95, { paragraph: SHORT_PARAGRAPHS }),
    expect: 'TooLarge',
    quick: true,
  },
  {
    what: 'pptx listing a 1 MB slide 5,000 times',
    name: 'amplified.pptx',
    make: () => pptxAmplified(5000, 'x'.repeat(1000), 1000),
    expect: 'SUCCEEDED',
    quick: true,
  },
  {
    what: 'EPUB listing a 1 MB chapter 5,000 times',
    name: 'amplified.epub',
    make: () => epubAmplified(5000, 'y'.repeat(1000), 1000),
    expect: 'SUCCEEDED',
  },
  {
    what: 'docx nested 100,000 deep',
    name: 'deep.docx',
    make: () => deepDocx(100_000),
    expect: 'TooLarge',
    quick: true,
  },
  {
    what: 'docx with an external entity and billion laughs',
    name: 'entities.docx',
    make: entityDocx,
    expect: 'InvalidContent',
    quick: true,
  },
  {
    what: 'PDF whose one stream inflates to 2 GB',
    name: 'stream.pdf',
    make: () => pdfStreamBomb(2 * GiB),
    expect: 'SUCCEEDED',
  },
];

type Api = ReturnType<typeof as>;

/** Creates a knowledge base over `bucketId/name`, runs its job to the end, answers the job. */
async function ingest(api: Api, bucketId: string, name: string): Promise<Record<string, any>> {
  const kb = await api.post('/api/knowledge-bases', {
    name: `drill-${name}`,
    type: 'gtc_hybrid_sql_pg_vector',
    config: { gtc_hybrid_sql_pg_vector: {} },
    asset_paths: [`${bucketId}/${name}`],
  });
  if (kb.status !== 201) throw new Error(`creating a knowledge base answered ${kb.status} ${kb.text}`);
  const job = await api.post(`/api/knowledge-bases/${kb.body.knowledge_base_id}/knowledge-base-jobs`);
  if (job.status !== 202) throw new Error(`starting a job answered ${job.status} ${job.text}`);
  const deadline = Date.now() + 180_000;
  for (;;) {
    const j = (await api.get(`/api/knowledge-base-jobs/${job.body.knowledge_base_job_id}`)).body;
    if (['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(j.status)) return j;
    if (Date.now() > deadline) throw new Error(`the job of ${name} did not end: ${JSON.stringify(j)}`);
    await sleep(200);
  }
}

/** The job's verdict: its status, or the type of its asset's error. */
const outcomeOf = (job: Record<string, any>) =>
  job.status === 'SUCCEEDED' && !job.errors?.length ? 'SUCCEEDED' : String(job.errors?.[0]?.type ?? job.status);

async function hostileDocuments(ctx: MachineAttackContext) {
  const procs = new Processes();
  const queue = `drill-documents-${process.pid}-${Date.now()}`;
  try {
    const api = await startApiProcess(procs, 'documents-api', { TEMPORAL_TASK_QUEUE: queue });
    const worker = await startWorkerProcess(procs, 'documents-worker', {
      TEMPORAL_TASK_QUEUE: queue,
      RUN_API_BASE_URL: api.baseUrl,
      EXTRACTION_MEMORY_MB: String(MEMORY_MB),
      EXTRACTION_THREADS: String(THREADS),
    });
    const pid = worker.proc.pid!;
    const hostile = await newTenant('drill-documents');
    const other = await newTenant('drill-documents-other');
    const h = as(hostile.key, api.baseUrl);
    const o = as(other.key, api.baseUrl);
    const bucket = async (a: Api) => (await a.post('/api/buckets', { name: 'docs' })).body.bucket_id as string;
    const [hBucket, oBucket] = [await bucket(h), await bucket(o)];
    await uploadText(o, oBucket, 'notes.md', 'Narwhals carry a spiral tusk.\n\nThey live in Arctic waters.');
    const quietStart = Date.now();
    const quiet = await ingest(o, oBucket, 'notes.md');
    const quietMs = Date.now() - quietStart;

    const results: string[] = [];
    let held = quiet.status === 'SUCCEEDED';
    let maxGrowth = 0;
    const othersDuring: Array<Promise<{ status: string; ms: number }>> = [];
    for (const c of CRAFTED.filter((c) => !ctx.quick || c.quick)) {
      const bytes = c.make();
      const upload = await h.put(`/api/buckets/${hBucket}/assets`, { name: c.name });
      if (upload.status !== 201) throw new Error(`creating asset ${c.name} answered ${upload.status}`);
      const url = await h.post(`/api/buckets/${hBucket}/asset-urls/${c.name}`, { operation: 'PUT' });
      const put = await fetch(url.body.url, { method: 'PUT', body: bytes });
      if (put.status !== 200) throw new Error(`uploading ${c.name} answered ${put.status}`);
      // The other organization's job starts with the attack's and must succeed beside it.
      const started = Date.now();
      othersDuring.push(ingest(o, oBucket, 'notes.md').then((j) => ({ status: j.status, ms: Date.now() - started })));
      const { value: job, growth } = await rssGrowthDuring(pid, () => ingest(h, hBucket, c.name));
      maxGrowth = Math.max(maxGrowth, growth);
      const outcome = outcomeOf(job);
      const text = JSON.stringify(job);
      const ok = outcome === c.expect && growth < RSS_BOUND && !/root:|aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/.test(text);
      held &&= ok;
      results.push(
        `${c.what} (${Math.round(bytes.length / 1024)} KB): ${outcome}, RSS +${Math.round(growth / 1e6)} MB${ok ? '' : ' BROKEN'}`,
      );
      ctx.note(`${c.name}: ${job.status} ${(job.errors?.[0]?.message ?? '').slice(0, 160)}`);
    }
    const others = await Promise.all(othersDuring);
    const alive = (() => {
      try {
        process.kill(pid, 0);
        return worker.proc.exitCode === null;
      } catch {
        return false;
      }
    })();
    const slowest = Math.max(...others.map((r) => r.ms));
    held &&= alive && others.every((r) => r.status === 'SUCCEEDED') && (ctx.quick || slowest <= 3 * quietMs + 2000);
    results.push(
      `worker pid ${pid} ${alive ? 'the same throughout' : 'GONE'}, peak RSS growth ${Math.round(maxGrowth / 1e6)} MB (bound ${Math.round(RSS_BOUND / 1e6)})`,
      `the other organization's ${others.length} jobs: ${others.filter((r) => r.status === 'SUCCEEDED').length} SUCCEEDED, slowest ${slowest} ms (quiet ${quietMs} ms)`,
    );
    return { held, result: results.join('; ') };
  } finally {
    await procs.stopAll(new Findings('hostile-machine/documents', 'cleanup'));
  }
}

export const attacks: MachineAttack[] = [
  {
    name: 'hostile-documents',
    limit: `extraction threads (EXTRACTION_MEMORY_MB=${MEMORY_MB}, EXTRACTION_THREADS=${THREADS}, EXTRACTION_TIME_LIMIT_SECONDS), zip parts counted as they inflate, streamed XML caps`,
    run: hostileDocuments,
  },
];
