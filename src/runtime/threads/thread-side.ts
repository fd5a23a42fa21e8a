// The thread's end of thread-pool.ts: serves the tasks the pool sends, one at a time. A task's handler gets
// its input and `ask`, which sends a question to the pool's side and resolves with the answer (how a thread
// pulls the next chunk of a stream the worker holds); the handler's result is answered as `done`, its error
// as `failed` with the error's `type`, if it has one.
import { parentPort } from 'node:worker_threads';

export type Ask = (question: unknown) => Promise<unknown>;

export function serveThreadTasks(handle: (input: unknown, ask: Ask) => Promise<unknown> | unknown): void {
  const port = parentPort;
  if (!port) throw new Error('serveThreadTasks runs in a worker thread');
  let waiting: ((answer: unknown) => void) | undefined;
  const ask: Ask = (question) =>
    new Promise((resolve) => {
      waiting = resolve;
      port.postMessage({ ask: question });
    });
  port.on('message', (msg: { task?: unknown; answer?: unknown }) => {
    if ('answer' in msg) {
      const resolve = waiting;
      waiting = undefined;
      resolve?.(msg.answer);
      return;
    }
    void (async () => {
      try {
        port.postMessage({ done: await handle(msg.task, ask) });
      } catch (err) {
        const e = err as Error & { type?: unknown };
        port.postMessage({ failed: { type: typeof e.type === 'string' ? e.type : undefined, message: e.message } });
      }
    })();
  });
}
