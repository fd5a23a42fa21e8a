// The zipped document readers (src/services/knowledge/documents/office.ts) on what the HTTP tests do not make: a
// zip bomb (entries declaring more than MAX_UNZIPPED_BYTES inflated) is TooLarge before anything is inflated; the
// shapes that cost a reader most stay within the caps: XML of the shortest paragraphs is streamed and its text
// refused at the cap as it is appended, a slide or chapter listed thousands of times is read once, deep
// nesting stops at its cap, and the fallback copy of alternate content is not read twice.
import { expect } from 'chai';
import JSZip from 'jszip';
import {
  ExtractionError,
  MAX_TEXT_CHARS,
  MAX_UNZIPPED_BYTES,
} from '../../../../../src/services/knowledge/documents/extraction-error';
import {
  extractDocx,
  extractEpub,
  extractPptx,
  MAX_SLIDES,
} from '../../../../../src/services/knowledge/documents/office';
import { MAX_XML_DEPTH } from '../../../../../src/services/knowledge/documents/xml-walk';
import { deepDocx, docxBomb, epubAmplified, pptxAmplified, zipOf } from '../../../../harness/document-bombs';
import { extractionFailure } from '../../../../harness/extraction-failure';

describe('office documents', () => {
  it('refuses a zip whose entries inflate past MAX_UNZIPPED_BYTES, for every zipped format', async () => {
    const zip = new JSZip();
    const megabyte = Buffer.alloc(1024 * 1024);
    for (let i = 0; i <= MAX_UNZIPPED_BYTES / megabyte.length; i++) zip.file(`word/part${i}.xml`, megabyte);
    const bomb = await zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' });
    expect(bomb.length).to.be.lessThan(MAX_UNZIPPED_BYTES / 100);
    for (const read of [extractDocx, extractPptx, extractEpub]) {
      const err = await extractionFailure(() => read('bomb.zip', bomb));
      expect(err).to.include({ type: 'TooLarge' });
      expect(err.message).to.include(`at most ${MAX_UNZIPPED_BYTES} are read`);
    }
  });

  it('reads a docx body a paragraph at a time: tabs, breaks, and no fallback copy', async () => {
    const paragraph =
      '<w:p><w:r><w:t>one</w:t><w:tab/><w:t>two</w:t><w:br/><w:t>three</w:t></w:r></w:p>' +
      '<w:p><mc:AlternateContent><mc:Choice><w:r><w:t>box</w:t></w:r></mc:Choice>' +
      '<mc:Fallback><w:r><w:t>box again</w:t></w:r></mc:Fallback></mc:AlternateContent></w:p><w:p/>';
    expect(await extractDocx('d.docx', docxBomb(2, { paragraph }))).to.equal(
      'one\ttwo\nthree\n\nbox\n\none\ttwo\nthree\n\nbox',
    );
  });

  it('refuses the text of the shortest paragraphs at MAX_TEXT_CHARS as it streams (no DOM of the part)', async () => {
    // 1 MB of XML, 20,000 paragraphs of 20 characters (the 100 MB of XML reached a heap out-of-memory)
    const paragraph = `<w:p><w:r><w:t>${'ab'.repeat(10)}</w:t></w:r></w:p>`.repeat(20_000);
    const times = Math.ceil(MAX_TEXT_CHARS / 400_000) + 1;
    const before = process.memoryUsage().heapUsed;
    const err = await extractionFailure(() => extractDocx('short.docx', docxBomb(times, { paragraph })));
    expect(err).to.include({ type: 'TooLarge' });
    expect(err.message).to.equal(`short.docx holds more than ${MAX_TEXT_CHARS} characters of text`);
    // A DOM of the part would take 40-130 bytes a byte of its 27 MB of XML.
    expect(process.memoryUsage().heapUsed - before).to.be.below(600 * 1024 * 1024);
  });

  it('reads a slide listed thousands of times once', async () => {
    const text = await extractPptx('amp.pptx', pptxAmplified(5_000, 'slide text', 3));
    expect(text).to.equal('slide text\nslide text\nslide text');
  });

  it(`refuses a presentation that lists more than ${MAX_SLIDES} slides`, async () => {
    const err = await extractionFailure(() => extractPptx('many.pptx', manySlides(MAX_SLIDES + 1)));
    expect(err.message).to.equal(`many.pptx lists more than ${MAX_SLIDES} slides`);
  });

  it('reads a chapter listed thousands of times in the spine once', async () => {
    const text = await extractEpub('amp.epub', epubAmplified(5_000, 'chapter text', 2));
    expect(text).to.equal('chapter text\n\nchapter text');
  });

  it('refuses a docx nested past the cap', async () => {
    expect(await extractDocx('ok.docx', deepDocx(MAX_XML_DEPTH - 10))).to.equal('deep');
    const err = await extractionFailure(() => extractDocx('deep.docx', deepDocx(100_000)));
    expect(err).to.include({ type: 'TooLarge' });
    expect(err.message).to.include(`nests deeper than ${MAX_XML_DEPTH} elements`);
  });
});

/** A presentation listing `n` distinct slides (their parts need not exist: the count stops first). */
function manySlides(n: number): Buffer {
  const rels = Array.from(
    { length: n },
    (_, i) =>
      `<Relationship Id="r${i}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/slide" Target="slides/s${i}.xml"/>`,
  ).join('');
  const ids = Array.from({ length: n }, (_, i) => `<p:sldId id="${256 + i}" r:id="r${i}"/>`).join('');
  return zipOf([
    {
      name: 'ppt/_rels/presentation.xml.rels',
      head: `<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${rels}</Relationships>`,
    },
    {
      name: 'ppt/presentation.xml',
      head: `<?xml version="1.0"?><p:presentation xmlns:p="p" xmlns:r="r"><p:sldIdLst>${ids}</p:sldIdLst></p:presentation>`,
    },
  ]);
}
