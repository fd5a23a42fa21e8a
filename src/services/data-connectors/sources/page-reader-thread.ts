// One extraction thread of page-reader.ts: reads each page it is sent (html-text.ts) and answers its text,
// title and links, or the error's message.
import { serveThreadTasks } from '../../../runtime/threads/thread-side';
import { readPage } from './html-text';

serveThreadTasks((input) => {
  const { html, base } = input as { html: string; base: string };
  return readPage(html, base);
});
