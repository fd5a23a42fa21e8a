// Document extraction where a hostile document can only hurt itself: extract.ts runs on a pool of worker
// threads (src/runtime/threads), each with a capped heap and each extraction with a time limit, while the
// worker streams the asset's bytes to it chunk by chunk; one organization's assets hold at most all the threads
// but one while another organization's wait. What a thread allocates outside its heap is bounded
// by the extractors themselves: the job's size caps on what is read, zip parts counted as they inflate
// (zip-parts.ts), XML streamed (xml-walk.ts). A document that hits a limit ends its thread, not the worker,
// and is that asset's ExtractionLimitExceeded error, naming the limit; it is not retried (the same bytes would
// hit it again), and the next asset gets a fresh thread.
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { Config } from '../../../config';
import { ThreadLimitExceeded, ThreadPool, ThreadTaskFailed } from '../../../runtime/threads/thread-pool';
import type { Extracted } from './extract';
import { ExtractionError } from './extraction-error';

/** EXTRACTION_MEMORY_MB (one thread's heap), EXTRACTION_TIME_LIMIT_SECONDS (one asset), EXTRACTION_THREADS. */
export type ExtractionLimits = Config['documentExtraction'];

const THREAD_SCRIPT = join(__dirname, 'extraction-thread.js');
const pools = new Map<string, ThreadPool>();

function poolFor(limits: ExtractionLimits): ThreadPool {
  const key = `${limits.memoryMb}/${limits.threads}`;
  let pool = pools.get(key);
  if (!pool) {
    // One organization's documents take at most all threads but one while another's wait.
    const maxPerKey = Math.max(1, limits.threads - 1);
    pool = new ThreadPool({ script: THREAD_SCRIPT, size: limits.threads, heapMb: limits.memoryMb, maxPerKey });
    pools.set(key, pool);
  }
  return pool;
}

/**
 * The text and metadata of the asset `name` whose bytes `stream` gives, extracted on an extraction thread
 * within `limits`, for the organization `organizationId` (its documents hold at most all threads but one);
 * `signal` stops it. The stream is consumed or destroyed.
 */
export async function extractIsolated(
  name: string,
  stream: Readable,
  limits: ExtractionLimits,
  opts: { organizationId?: string; signal?: AbortSignal } = {},
): Promise<Extracted> {
  const chunks = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  try {
    return await poolFor(limits).run<Extracted>(
      { name },
      {
        timeoutMs: limits.timeSeconds * 1000,
        signal: opts.signal,
        key: opts.organizationId,
        answer: async () => {
          const next = await chunks.next();
          if (next.done) return { value: null };
          const copy = new Uint8Array(next.value); // a chunk may share a pooled buffer: send a copy of its own
          return { value: copy, transfer: [copy.buffer] };
        },
      },
    );
  } catch (err) {
    if (err instanceof ThreadTaskFailed) {
      const type = err.type as ExtractionError['type'] | undefined;
      if (type) throw new ExtractionError(type, err.message);
      throw new Error(err.message);
    }
    if (err instanceof ThreadLimitExceeded) {
      const which =
        err.limit === 'memory'
          ? `memory limit of ${limits.memoryMb} MB (EXTRACTION_MEMORY_MB)`
          : `time limit of ${limits.timeSeconds} s (EXTRACTION_TIME_LIMIT_SECONDS)`;
      throw new ExtractionError('ExtractionLimitExceeded', `Reading ${name} exceeded the extraction's ${which}`);
    }
    throw err;
  } finally {
    stream.destroy();
  }
}
