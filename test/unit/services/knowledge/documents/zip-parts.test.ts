// Zipped documents judged by the bytes they really inflate to (src/services/knowledge/documents/zip-parts.ts): declared
// sizes past 2 GiB and past 4 GiB (zip64) are read as what they say and refused before anything is inflated;
// headers that lie are caught at the size they declare; a part past its own cap stops as it streams.
import { expect } from 'chai';
import { ExtractionError, MAX_UNZIPPED_BYTES } from '../../../../../src/services/knowledge/documents/extraction-error';
import { MAX_PART_BYTES, ZippedDocument } from '../../../../../src/services/knowledge/documents/zip-parts';
import { zipOf } from '../../../../harness/document-bombs';
import { extractionFailure } from '../../../../harness/extraction-failure';

const MiB = 1024 * 1024;
const megabyte = 'x'.repeat(MiB);

async function readAll(doc: ZippedDocument, path: string): Promise<number> {
  let chars = 0;
  for await (const piece of doc.textOf(path)) chars += piece.length;
  return chars;
}

describe('zipped document parts', () => {
  it('reads a part as it inflates, its size whatever the headers are honest about', async () => {
    const doc = await ZippedDocument.open(
      'a.docx',
      zipOf([{ name: 'p.xml', body: megabyte, times: 3 }]),
      'Word document',
    );
    expect(await readAll(doc, 'p.xml')).to.equal(3 * MiB);
    expect(doc.has('p.xml')).to.equal(true);
    expect(doc.has('q.xml')).to.equal(false);
    const missing = await extractionFailure(() => doc.wholeText('q.xml', 100));
    expect(missing).to.include({ type: 'InvalidContent' });
    expect(missing.message).to.equal('a.docx is not a readable Word document: q.xml is missing');
  });

  for (const [what, declared] of [
    ['2 GiB and more, in the 32-bit field (read as negative by jszip)', 2 ** 31 + 7],
    ['past 4 GiB, in zip64', 5 * 2 ** 30 + 3],
  ] as const) {
    it(`refuses a declared size of ${what} before inflating a byte`, async () => {
      const zip = zipOf([{ name: 'word/document.xml', body: megabyte, times: 2, declared }]);
      const err = await extractionFailure(() => ZippedDocument.open('big.docx', zip, 'Word document'));
      expect(err).to.include({ type: 'TooLarge' });
      expect(err.message).to.equal(`big.docx inflates to ${declared} bytes; at most ${MAX_UNZIPPED_BYTES} are read`);
    });
  }

  it('stops a part whose local and central headers both lie at the size they declare', async () => {
    const zip = zipOf([{ name: 'word/document.xml', body: megabyte, times: 300, declared: 1000 }]);
    expect(zip.length).to.be.below(2 * MiB);
    const doc = await ZippedDocument.open('lies.docx', zip, 'Word document');
    const err = await extractionFailure(() => readAll(doc, 'word/document.xml'));
    expect(err).to.include({ type: 'InvalidContent' });
    expect(err.message).to.include('word/document.xml cannot be inflated: too many bytes in the stream. expected 1000');
  });

  it('stops a part past its cap, and a document past its total, as they stream', async () => {
    const big = zipOf([{ name: 'a.xml', body: megabyte, times: MAX_PART_BYTES / MiB + 1 }]);
    const one = await ZippedDocument.open('one.epub', big, 'EPUB');
    const err = await extractionFailure(() => readAll(one, 'a.xml'));
    expect(err).to.include({ type: 'TooLarge' });
    expect(err.message).to.equal(`one.epub: a.xml inflates past ${MAX_PART_BYTES} bytes; at most that is read`);
    const small = await ZippedDocument.open('small.epub', big, 'EPUB');
    expect((await extractionFailure(() => small.wholeText('a.xml', 10))).message).to.include(
      'a.xml inflates past 10 bytes',
    );
  });

  it('counts every part read against the document: the same part read again is counted again', async () => {
    const parts = Math.floor(MAX_UNZIPPED_BYTES / (64 * MiB)); // 3 parts of 64 MiB: 192 of the 200 MiB
    const zip = zipOf([{ name: 'c.xhtml', body: megabyte, times: 64 }]);
    const doc = await ZippedDocument.open('many.epub', zip, 'EPUB');
    for (let i = 0; i < parts; i++) await readAll(doc, 'c.xhtml');
    const err = await extractionFailure(() => readAll(doc, 'c.xhtml'));
    expect(err.message).to.equal(`many.epub inflates past ${MAX_UNZIPPED_BYTES} bytes; at most that is read`);
  });

  it('is InvalidContent for bytes that are no zip', async () => {
    const err = await extractionFailure(() =>
      ZippedDocument.open('x.pptx', Buffer.from('not a zip at all'), 'presentation'),
    );
    expect(err).to.include({ type: 'InvalidContent' });
    expect(err.message).to.match(/^x\.pptx is not a readable presentation: /);
  });
});
