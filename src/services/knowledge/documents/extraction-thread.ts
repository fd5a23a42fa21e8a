// One document extraction thread of extract-isolated.ts: reads the asset it is sent by pulling its bytes from
// the worker a chunk at a time (a Readable whose reads ask for the next chunk), extracts its text with
// extract.ts and answers the text and metadata, or the extraction's error with its type.
import { Readable } from 'node:stream';
import { serveThreadTasks } from '../../../runtime/threads/thread-side';
import { extractDocument } from './extract';

serveThreadTasks(async (input, ask) => {
  const { name } = input as { name: string };
  const bytes = new Readable({
    read() {
      void ask('chunk').then((chunk) => this.push(chunk === null ? null : Buffer.from(chunk as Uint8Array)));
    },
  });
  return extractDocument(name, bytes);
});
