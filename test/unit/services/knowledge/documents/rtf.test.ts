// The RTF reader (src/services/knowledge/documents/rtf.ts) on documents the test writes: plain paragraphs, \uN and \'hh
// characters, a table, pictures (hex and \bin) whose bytes must not leak into the text, the metadata and field
// instructions a reader does not see; and what is refused per asset: a file that is not RTF, one cut short,
// groups nested past MAX_GROUP_DEPTH, a \bin run past MAX_BINARY_RUN, text past MAX_TEXT_CHARS.
import { Readable } from 'node:stream';
import { expect } from 'chai';
import { ExtractionError, MAX_TEXT_CHARS } from '../../../../../src/services/knowledge/documents/extraction-error';
import { extractDocument } from '../../../../../src/services/knowledge/documents/extract';
import { MAX_BINARY_RUN, MAX_GROUP_DEPTH, extractRtf } from '../../../../../src/services/knowledge/documents/rtf';

/** `text` as a stream of small chunks, so that tokens straddle chunk boundaries. */
function streamOf(text: string | Buffer, chunk = 7): Readable {
  const bytes = Buffer.isBuffer(text) ? text : Buffer.from(text, 'latin1');
  const parts: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += chunk) parts.push(bytes.subarray(i, i + chunk));
  return Readable.from(parts);
}

async function refusal(rtf: string | Buffer): Promise<ExtractionError> {
  const err = await extractRtf('doc.rtf', streamOf(rtf, 4096)).then(
    () => undefined,
    (e: Error) => e,
  );
  expect(err).to.be.instanceOf(ExtractionError);
  return err as ExtractionError;
}

const DOCUMENT = [
  '{\\rtf1\\ansi\\ansicpg1252\\deff0{\\fonttbl{\\f0\\froman Times New Roman;}}',
  '{\\colortbl;\\red255\\green0\\blue0;}{\\*\\generator Hand 1.0;}',
  '{\\info{\\title Secret Title}{\\author Ann Author}}',
  '\\pard Hello {\\b plain} world.\\par',
  "Unicode: caf\\u233?s \\u8364? na\\'efve \\u-10179?\\u-8704? end.\\par",
  '\\trowd\\cellx2000\\cellx4000 Alpha\\cell Beta\\cell\\row',
  '\\trowd\\cellx2000\\cellx4000 Gamma\\cell Delta\\cell\\row',
  'Before{\\pict\\pngblip\\picw10\\pich10 89504e470d0a1a0a0000000d49484452}after.\\par',
  '{\\*\\shppict{\\pict\\pngblip 89504e47deadbeef}}{\\nonshppict{\\pict\\wmetafile8 0100090000}}',
  'Raw {\\pict\\bin6 \x00\x01\xff{}\\}bytes.\\par',
  '{\\field{\\*\\fldinst HYPERLINK "https://example.org/"}{\\fldrslt Example link}}\\par',
  '}',
].join('\n');

describe('RTF documents', () => {
  it('reads paragraphs, unicode, tables and fields, without metadata or picture bytes', async () => {
    const text = await extractRtf('doc.rtf', streamOf(DOCUMENT));
    expect(text.split('\n')).to.deep.equal([
      'Hello plain world.',
      'Unicode: cafés € naïve 😀 end.',
      'Alpha\tBeta',
      'Gamma\tDelta',
      'Beforeafter.',
      'Raw bytes.',
      'Example link',
    ]);
  });

  it('is a format of extractDocument, with format rtf', async () => {
    const document = await extractDocument('notes/doc.rtf', streamOf(DOCUMENT, 1024));
    expect(document.meta).to.deep.equal({ format: 'rtf' });
    expect(document.text).to.include('Alpha\tBeta');
  });

  it('refuses what is not RTF, and a document cut short', async () => {
    const notRtf = await refusal('plain words, not RTF');
    expect(notRtf).to.include({ type: 'InvalidContent' });
    expect(notRtf.message).to.match(/^doc\.rtf is not a readable RTF document: File should start with/);
    const cut = await refusal(DOCUMENT.slice(0, Math.floor(DOCUMENT.length / 2)));
    expect(cut).to.include({ type: 'InvalidContent' });
    expect(cut.message).to.include('cut short');
    const empty = await refusal('{\\rtf1\\ansi{\\info{\\title Only a title}}}');
    expect(empty).to.include({ type: 'InvalidContent', message: 'doc.rtf holds no text' });
  });

  it('refuses groups nested too deep and a \\bin run longer than any asset, before allocating it', async () => {
    const deep = await refusal(`{\\rtf1 ${'{'.repeat(MAX_GROUP_DEPTH + 10)}x${'}'.repeat(MAX_GROUP_DEPTH + 11)}`);
    expect(deep.message).to.include(`nest deeper than ${MAX_GROUP_DEPTH}`);
    // Were the tokenizer's allocation not refused, this would reserve 2 GB and wait for bytes that never come.
    const before = process.memoryUsage().arrayBuffers;
    const bin = await refusal('{\\rtf1 text {\\pict\\bin2000000000 ab}}');
    expect(bin.message).to.include(`a \\bin run is longer than ${MAX_BINARY_RUN} bytes`);
    expect(process.memoryUsage().arrayBuffers - before).to.be.lessThan(MAX_BINARY_RUN);
  });

  it('stops at MAX_TEXT_CHARS as TooLarge, reading no further', async () => {
    const paragraph = `${'word '.repeat(2000)}\\par\n`;
    const paragraphs = 2 * Math.ceil(MAX_TEXT_CHARS / 10_000);
    let produced = 0;
    const body = Readable.from(
      (function* () {
        yield Buffer.from('{\\rtf1\\ansi ');
        for (let i = 0; i < paragraphs; i++) {
          produced++;
          yield Buffer.from(paragraph);
        }
        yield Buffer.from('}');
      })(),
    );
    const err = await extractRtf('big.rtf', body).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err).to.be.instanceOf(ExtractionError).and.include({ type: 'TooLarge' });
    expect(err!.message).to.equal(`big.rtf holds more than ${MAX_TEXT_CHARS} characters of text`);
    expect(produced).to.be.lessThan(paragraphs);
  });

  it('stops when its signal aborts', async () => {
    const controller = new AbortController();
    const endless = Readable.from(
      (function* () {
        yield Buffer.from('{\\rtf1\\ansi ');
        for (let i = 0; ; i++) {
          if (i === 100) controller.abort(new Error('job cancelled'));
          yield Buffer.from('more text\\par\n');
        }
      })(),
    );
    const err = await extractRtf('endless.rtf', endless, controller.signal).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err).to.be.instanceOf(Error);
    expect(err).not.to.be.instanceOf(ExtractionError);
  });
});
