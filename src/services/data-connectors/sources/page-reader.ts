// Reading HTML pages (html-text.ts: Readability on a DOM, 2–30 ms of CPU a page) off the worker's event loop:
// a small pool of worker threads (DATA_CONNECTOR_EXTRACT_THREADS; 0 reads on the calling thread), so a
// webscraper job's extraction runs on another core while its fetches and writes wait on I/O, and a large
// page does not hold up heartbeats and other activities. Threads start on first use and end after
// IDLE_MS without work; each has a heap cap, so a page that would exhaust memory fails alone (FetchFailed
// for that page) and its thread is replaced.
import { Worker } from 'node:worker_threads';
import { join } from 'node:path';
import { readPage, type PageText } from './html-text';

const IDLE_MS = 30_000;
/** Heap of one extraction thread: far above any page under DATA_CONNECTOR_MAX_ITEM_BYTES' default share. */
const THREAD_HEAP_MB = 512;
const THREAD_SCRIPT = join(__dirname, 'page-reader-thread.js');

interface Task {
  html: string;
  base: string;
  resolve(page: PageText): void;
  reject(err: Error): void;
}

class PageReaderPool {
  private readonly idle: Worker[] = [];
  private readonly busy = new Map<Worker, Task>();
  private readonly queue: Task[] = [];
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(private readonly size: number) {}

  read(html: string, base: string): Promise<PageText> {
    return new Promise((resolve, reject) => {
      this.queue.push({ html, base, resolve, reject });
      this.dispatch();
    });
  }

  private dispatch(): void {
    clearTimeout(this.idleTimer);
    while (this.queue.length && (this.idle.length || this.busy.size < this.size)) {
      const thread = this.idle.pop() ?? this.spawn();
      const task = this.queue.shift()!;
      this.busy.set(thread, task);
      thread.ref(); // a page in the works keeps the process alive, an idle thread does not
      thread.postMessage({ html: task.html, base: task.base });
    }
    if (!this.busy.size && !this.queue.length) {
      this.idleTimer = setTimeout(() => this.closeIdle(), IDLE_MS).unref();
    }
  }

  private spawn(): Worker {
    const thread = new Worker(THREAD_SCRIPT, { resourceLimits: { maxOldGenerationSizeMb: THREAD_HEAP_MB } });
    thread.on('message', (msg: { page?: PageText; error?: string }) => {
      const task = this.busy.get(thread);
      this.busy.delete(thread);
      this.idle.push(thread);
      thread.unref();
      if (msg.page) task?.resolve(msg.page);
      else task?.reject(new Error(msg.error ?? 'the page could not be read'));
      this.dispatch();
    });
    const lost = (err: Error) => {
      const task = this.busy.get(thread);
      this.busy.delete(thread);
      const at = this.idle.indexOf(thread);
      if (at >= 0) this.idle.splice(at, 1);
      task?.reject(new Error(`the page could not be read: ${err.message}`));
      this.dispatch();
    };
    thread.on('error', lost);
    thread.on('exit', (code) => {
      if (this.busy.has(thread) || this.idle.includes(thread)) lost(new Error(`extraction thread exited (${code})`));
    });
    // Unreferenced after the listeners (adding a 'message' listener refs the thread's port again): an idle thread
    // kept the worker process from exiting after its shutdown for up to IDLE_MS (the bench saw it after data-jobs).
    thread.unref();
    return thread;
  }

  private closeIdle(): void {
    for (const thread of this.idle.splice(0)) void thread.terminate();
  }
}

const pools = new Map<number, PageReaderPool>();

/** readPage (html-text.ts) on one of `threads` extraction threads, or here when `threads` is 0. */
export function readPageOffThread(html: string, base: string, threads: number): Promise<PageText> {
  if (threads <= 0) return Promise.resolve(readPage(html, base));
  let pool = pools.get(threads);
  if (!pool) pools.set(threads, (pool = new PageReaderPool(threads)));
  return pool.read(html, base);
}
