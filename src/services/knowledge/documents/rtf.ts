// The text of an RTF document (.rtf), streamed through rtf-stream-parser (pure JavaScript, no native parser
// of hostile input in the worker): its tokenizer reads the bytes as they arrive and its ToPlainText stage
// interprets them as the RTF 1.9.1 specification says (groups, destinations, \ucN skips, \uN and \'hh in the
// document's and each font's code page, decoded by iconv-lite). On top of it, what a knowledge base wants:
// the text a reader sees, a line per paragraph and a tab between table cells, without the document's
// metadata (\info), pictures (\pict hex or \bin bytes), embedded objects, field instructions and the other
// tables Word writes. Bounds: groups nest at most MAX_GROUP_DEPTH deep (the parser keeps one state per
// level), a \bin run is at most MAX_BINARY_RUN bytes (the tokenizer allocates it whole before reading it),
// and the text at most MAX_TEXT_CHARS. A file that is not RTF, or whose groups are not closed, is
// InvalidContent.
import { type Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import iconv from 'iconv-lite';
import { Tokenize } from 'rtf-stream-parser';
import { ToPlainText } from 'rtf-stream-parser/dist/src/ToPlainText';
import type { ProcessTokensGlobalState } from 'rtf-stream-parser/dist/src/ProcessTokens.types';
import type { FeatureHandler } from 'rtf-stream-parser/dist/src/features/types';
import { ExtractionError, MAX_TEXT_CHARS, tooMuchText } from './extraction-error';

/** Nesting a real document never reaches (Word's deepest tables and lists stay under 100). */
export const MAX_GROUP_DEPTH = 512;
/** Bytes of one \bin run (a picture's raw bytes): more is no document a knowledge base reads. */
export const MAX_BINARY_RUN = 50 * 1024 * 1024;

/** Destinations whose content is not the document's text. */
const HIDDEN = [
  'info',
  'pict',
  'object',
  'objdata',
  'datastore',
  'themedata',
  'colorschememapping',
  'latentstyles',
  'listtable',
  'listoverridetable',
  'rsidtbl',
  'generator',
  'xmlnstbl',
  'fldinst',
  'template',
  'filetbl',
  'revtbl',
  'bkmkstart',
  'bkmkend',
];

class Refused extends Error {}

/** The parser's tokenizer, refusing a \bin run it would otherwise allocate whatever its length says. */
class BoundedTokenize extends Tokenize {
  override _handleSpecialOrPush(): void {
    if (this._token?.word === 'bin' && Number.parseInt(this._paramStr || '0', 10) > MAX_BINARY_RUN) {
      throw new Refused(`a \\bin run is longer than ${MAX_BINARY_RUN} bytes`);
    }
    super._handleSpecialOrPush();
  }
}

const breaks = (text: string) => (state: ProcessTokensGlobalState) => (state as unknown as Pushing)._pushOutput(text);
type Pushing = { _pushOutput(data: string): void };

/** What a knowledge base keeps of a document's output, and the bounds on its structure. */
const readerText: FeatureHandler<ProcessTokensGlobalState> = {
  allTokenHandler: (state, token) => {
    if (token.type === 0 && state._state.groupDepth >= MAX_GROUP_DEPTH) {
      throw new Refused(`its groups nest deeper than ${MAX_GROUP_DEPTH}`);
    }
  },
  controlHandlers: { cell: breaks('\t'), nestcell: breaks('\t'), row: breaks('\n'), nestrow: breaks('\n') },
  outputDataFilter: (state) => {
    const within = state._state.allDestinations;
    if (within && HIDDEN.some((d) => within[d])) return true;
  },
  preStreamFlushHandler: (state) => {
    if (state._state !== state._rootState) throw new Refused('it is cut short (a group is not closed)');
  },
};

export async function extractRtf(name: string, input: Readable, signal?: AbortSignal): Promise<string> {
  const plain = new ToPlainText({ decode: iconv.decode, encode: iconv.encode, warn: () => undefined });
  plain._featureHandlers.push(readerText);
  const parts: string[] = [];
  let length = 0;
  const collect = new Writable({
    objectMode: true,
    write(text: string, _enc, done) {
      length += text.length;
      if (length > MAX_TEXT_CHARS) return done(tooMuchText(name));
      parts.push(text);
      done();
    },
  });
  try {
    await pipeline(input, new BoundedTokenize(), plain, collect, { signal });
  } catch (err) {
    if (err instanceof ExtractionError || signal?.aborted) throw err;
    const why = err instanceof Refused ? err.message : (err as Error).message;
    throw new ExtractionError('InvalidContent', `${name} is not a readable RTF document: ${why}`);
  }
  const text = parts
    .join('')
    .replace(/\r\n?/g, '\n')
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  if (!text) throw new ExtractionError('InvalidContent', `${name} holds no text`);
  return text;
}
