// One extraction thread of page-reader.ts: reads each page it is sent (html-text.ts) and answers its text,
// title and links, or the error's message.
import { parentPort } from 'node:worker_threads';
import { readPage } from './html-text';

parentPort?.on('message', ({ html, base }: { html: string; base: string }) => {
  try {
    parentPort!.postMessage({ page: readPage(html, base) });
  } catch (err) {
    parentPort!.postMessage({ error: (err as Error).message });
  }
});
