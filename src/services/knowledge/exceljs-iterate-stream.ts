// A fix for exceljs 4.4.0's streaming reader, installed before exceljs is first loaded (xlsx.ts imports this
// module first): its `lib/utils/iterate-stream.js` turns a stream into an async iterator with 'data' events,
// pause() and a race with 'end', and under some chunkings of the input it loses the zip's entries after a large
// spooled worksheet (the worksheet then arrives without the workbook and the shared strings table: its text
// vanishes; reproduced about once in eight reads of a 48 MB workbook fed in random chunk sizes). Node's own
// async iteration of a Readable (which unzipper's entries and parser are) has no such race. The replacement is
// put in Node's module cache under that file's name, so exceljs's `require` of it gets ours.
import Module from 'node:module';
import type { Readable } from 'node:stream';

const file = require.resolve('exceljs/lib/utils/iterate-stream.js');
if (!require.cache[file]) {
  const fixed = new Module(file);
  fixed.filename = file;
  fixed.loaded = true;
  // Like exceljs's own, a consumer that stops early leaves the stream as it is (Node would destroy it, and
  // unzipper then fails the whole zip with an AbortError).
  fixed.exports = async function* iterateStream(stream: Readable) {
    for await (const chunk of stream.iterator({ destroyOnReturn: false })) yield chunk;
  };
  require.cache[file] = fixed;
}
