// Reading HTML pages (html-text.ts: Readability on a DOM, 2–30 ms of CPU a page) off the worker's event loop:
// a small pool of worker threads (DATA_CONNECTOR_EXTRACT_THREADS; 0 reads on the calling thread), so a
// webscraper job's extraction runs on another core while its fetches and writes wait on I/O, and a large
// page does not hold up heartbeats and other activities. The pool is src/runtime/threads: threads start on
// first use and end when idle; each has a heap cap, so a page that would exhaust memory fails alone
// (FetchFailed for that page) and its thread is replaced.
import { join } from 'node:path';
import { ThreadPool, ThreadTaskFailed } from '../../../runtime/threads/thread-pool';
import { readPage, type PageText } from './html-text';

/** Heap of one extraction thread: far above any page under DATA_CONNECTOR_MAX_ITEM_BYTES' default share. */
const THREAD_HEAP_MB = 512;
const THREAD_SCRIPT = join(__dirname, 'page-reader-thread.js');

const pools = new Map<number, ThreadPool>();

/** readPage (html-text.ts) on one of `threads` extraction threads, or here when `threads` is 0. */
export async function readPageOffThread(html: string, base: string, threads: number): Promise<PageText> {
  if (threads <= 0) return readPage(html, base);
  let pool = pools.get(threads);
  if (!pool)
    pools.set(threads, (pool = new ThreadPool({ script: THREAD_SCRIPT, size: threads, heapMb: THREAD_HEAP_MB })));
  try {
    return await pool.run<PageText>({ html, base });
  } catch (err) {
    if (err instanceof ThreadTaskFailed) throw new Error(err.message);
    throw new Error(`the page could not be read: ${(err as Error).message}`);
  }
}
