// A fix for exceljs 4.4.0's streaming reader (4.4.0 is its latest release), installed before exceljs is first
// loaded (xlsx.ts imports this module first): its `lib/utils/iterate-stream.js` turns a stream into an async
// iterator with 'data' events, pause() and a race with 'end', and under some chunkings of the input it loses
// the zip's entries after a large spooled worksheet (the worksheet then arrives without the workbook and the
// shared strings table: its text vanishes; reproduced about once in eight reads of a 48 MB workbook fed in
// random chunk sizes). Node's own async iteration of a Readable (which unzipper's entries and parser are) has
// no such race. The replacement is put in Node's module cache under that file's name, so the `require` of it
// in exceljs's `lib/stream/xlsx/workbook-reader.js` gets ours. Were exceljs's own helper loaded first (exceljs
// imported before this module), the reader would keep the faulty one: that fails here, at load, not in a job.
import Module from 'node:module';
import path from 'node:path';
import type { Readable } from 'node:stream';

const file = require.resolve('exceljs/lib/utils/iterate-stream.js');

/** Like exceljs's own, a consumer that stops early leaves the stream as it is (Node would destroy it, and
 * unzipper then fails the whole zip with an AbortError). */
export async function* iterateStream(stream: Readable): AsyncGenerator<unknown> {
  for await (const chunk of stream.iterator({ destroyOnReturn: false })) yield chunk;
}

/** Whether exceljs's streaming reader gets `iterateStream` for the helper it requires. */
export function iterateStreamReplaced(): boolean {
  const reader = require.resolve('exceljs/lib/stream/xlsx/workbook-reader.js');
  const required = require.resolve('../../utils/iterate-stream', { paths: [path.dirname(reader)] });
  return required === file && require.cache[file]?.exports === iterateStream;
}

if (!require.cache[file]) {
  const fixed = new Module(file);
  fixed.filename = file;
  fixed.loaded = true;
  fixed.exports = iterateStream;
  require.cache[file] = fixed;
} else if (require.cache[file]!.exports !== iterateStream) {
  throw new Error(`exceljs was loaded before ${__filename}: its streaming reader would keep its faulty iterate-stream`);
}
