// Work that must not take the worker down, on a small pool of worker threads with hard limits: each thread's
// heap is capped (resourceLimits), a task past its time limit has its thread terminated, and a thread that
// exhausts its heap ends alone (ERR_WORKER_OUT_OF_MEMORY) while the worker and its other tasks go on. What
// the thread allocates outside its heap (buffers, zlib) the task itself must bound. Threads start on first use,
// serve one task at a time, are reused while healthy and end after idleMs without work; tasks past `size`
// wait their turn (their time limit starts with the thread), and one key (an organization) holds at most
// `maxPerKey` threads while another's tasks wait. thread-side.ts is the other end of the protocol:
// the task goes in, the thread may ask questions (a pull of the next chunk of its input) and answers its
// result or a failure.
import { Worker } from 'node:worker_threads';

export interface ThreadPoolOptions {
  /** The thread's script (compiled JavaScript that calls serveThreadTasks). */
  script: string;
  /** Threads at once. */
  size: number;
  /** Heap of one thread (its old generation). */
  heapMb: number;
  idleMs?: number;
  /** Threads that the tasks of one key (an organization) may hold at once; the others' tasks go first. */
  maxPerKey?: number;
}

/** A task's limit was hit: its thread was ended (and is not reused). */
export class ThreadLimitExceeded extends Error {
  constructor(
    readonly limit: 'memory' | 'time',
    message: string,
  ) {
    super(message);
  }
}

/** A failure the thread answered: the task's own error, with the `type` it carried (if any). */
export class ThreadTaskFailed extends Error {
  constructor(
    readonly type: string | undefined,
    message: string,
  ) {
    super(message);
  }
}

export interface TaskOptions {
  /** Whose task it is (an organization): at most `maxPerKey` threads run one key's tasks at once. */
  key?: string;
  /** Wall time of the task once a thread has it. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Answers a question of the thread: the value, and what to transfer rather than copy. */
  answer?: (question: unknown) => Promise<{ value: unknown; transfer?: ArrayBuffer[] }>;
}

interface Task {
  input: unknown;
  opts: TaskOptions;
  unqueue?: () => void;
  resolve(value: unknown): void;
  reject(err: Error): void;
}

interface ThreadMessage {
  ask?: unknown;
  done?: unknown;
  failed?: { type?: string; message: string };
}

export class ThreadPool {
  private readonly idle: Worker[] = [];
  private readonly busy = new Map<Worker, { task: Task; timer?: NodeJS.Timeout; stop?: () => void }>();
  private readonly queue: Task[] = [];
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: ThreadPoolOptions) {}

  run<T>(input: unknown, opts: TaskOptions = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const { signal } = opts;
      if (signal?.aborted) return reject(signal.reason ?? new Error('aborted'));
      const task: Task = { input, opts, resolve: resolve as (v: unknown) => void, reject };
      if (signal) {
        // While it waits: an abort drops it from the queue (begin() removes this and listens for itself).
        const drop = () => {
          const at = this.queue.indexOf(task);
          if (at >= 0) this.queue.splice(at, 1);
          reject(signal.reason ?? new Error('aborted'));
        };
        signal.addEventListener('abort', drop, { once: true });
        task.unqueue = () => signal.removeEventListener('abort', drop);
      }
      this.queue.push(task);
      this.dispatch();
    });
  }

  private dispatch(): void {
    clearTimeout(this.idleTimer);
    while (this.queue.length && (this.idle.length || this.busy.size < this.options.size)) {
      const at = this.queue.findIndex((t) => this.mayStart(t));
      if (at < 0) break;
      const [task] = this.queue.splice(at, 1);
      task.unqueue?.();
      this.begin(this.idle.pop() ?? this.spawn(), task);
    }
    if (!this.busy.size && !this.queue.length) {
      this.idleTimer = setTimeout(() => this.closeIdle(), this.options.idleMs ?? 30_000).unref();
    }
  }

  /** The oldest task goes first, unless its key already holds `maxPerKey` threads. */
  private mayStart(task: Task): boolean {
    const { maxPerKey } = this.options;
    if (!maxPerKey || task.opts.key === undefined) return true;
    let held = 0;
    for (const { task: running } of this.busy.values()) if (running.opts.key === task.opts.key) held++;
    return held < maxPerKey;
  }

  private begin(thread: Worker, task: Task): void {
    const state: { task: Task; timer?: NodeJS.Timeout; stop?: () => void } = { task };
    this.busy.set(thread, state);
    thread.ref(); // a task in the works keeps the process alive, an idle thread does not
    const { timeoutMs, signal } = task.opts;
    if (timeoutMs) {
      state.timer = setTimeout(
        () => this.end(thread, new ThreadLimitExceeded('time', `it ran past its time limit of ${timeoutMs} ms`)),
        timeoutMs,
      );
    }
    if (signal) {
      const stop = () => this.end(thread, signal.reason ?? new Error('aborted'));
      signal.addEventListener('abort', stop, { once: true });
      state.stop = () => signal.removeEventListener('abort', stop);
    }
    thread.postMessage({ task: task.input });
  }

  /** Settles the thread's task; a thread that failed it by a limit, an abort or an exit is ended, not reused. */
  private settle(thread: Worker, outcome: { value: unknown } | { error: Error }, reuse: boolean): void {
    const state = this.busy.get(thread);
    if (!state) return;
    this.busy.delete(thread);
    clearTimeout(state.timer);
    state.stop?.();
    if (reuse) {
      this.idle.push(thread);
      thread.unref();
    } else {
      void thread.terminate();
    }
    if ('value' in outcome) state.task.resolve(outcome.value);
    else state.task.reject(outcome.error);
    this.dispatch();
  }

  private end(thread: Worker, error: Error): void {
    this.settle(thread, { error }, false);
  }

  private spawn(): Worker {
    const thread = new Worker(this.options.script, {
      resourceLimits: { maxOldGenerationSizeMb: this.options.heapMb },
    });
    thread.on('message', (msg: ThreadMessage) => {
      const state = this.busy.get(thread);
      if (!state) return;
      if ('ask' in msg) {
        const answer = state.task.opts.answer;
        if (!answer) return this.end(thread, new Error('the thread asked a question nobody answers'));
        answer(msg.ask).then(
          ({ value, transfer }) => {
            if (this.busy.get(thread) === state) thread.postMessage({ answer: value }, transfer ?? []);
          },
          // (A late failure of an answer the task no longer waits for, the thread serving the next task: ignored.)
          (err: Error) => {
            if (this.busy.get(thread) === state) this.end(thread, err);
          },
        );
      } else if (msg.failed) {
        this.settle(thread, { error: new ThreadTaskFailed(msg.failed.type, msg.failed.message) }, true);
      } else {
        this.settle(thread, { value: msg.done }, true);
      }
    });
    const lost = (err: Error & { code?: string }) => {
      const at = this.idle.indexOf(thread);
      if (at >= 0) this.idle.splice(at, 1);
      const error =
        err.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? new ThreadLimitExceeded('memory', `it used more than its memory limit of ${this.options.heapMb} MB`)
          : err;
      this.end(thread, error);
    };
    thread.on('error', lost);
    thread.on('exit', (code) => lost(new Error(`the thread exited (${code})`)));
    // Unreferenced after the listeners (adding a 'message' listener refs the thread's port again): an idle
    // thread must not keep the worker process from exiting after its shutdown.
    thread.unref();
    return thread;
  }

  private closeIdle(): void {
    for (const thread of this.idle.splice(0)) void thread.terminate();
  }
}
