// Document extraction on its own threads (src/services/knowledge/documents/extract-isolated.ts): an asset's bytes are
// streamed to the thread and its text comes back as extract.ts gives it; an asset past the thread's memory or
// time limit is ExtractionLimitExceeded naming the limit, and the worker (this process) and the next asset go on.
import { Readable } from 'node:stream';
import { expect } from 'chai';
import { extractIsolated } from '../../../../../src/services/knowledge/documents/extract-isolated';
import { ExtractionError } from '../../../../../src/services/knowledge/documents/extraction-error';
import { docxBomb } from '../../../../harness/document-bombs';
import { extractionFailure } from '../../../../harness/extraction-failure';

const LIMITS = { memoryMb: 128, timeSeconds: 30, threads: 1 };
const chunked = (bytes: Buffer, size = 1000) =>
  Readable.from(
    Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size)),
  );

describe('document extraction on its own threads', () => {
  it('streams the bytes to the thread and answers the text and format', async () => {
    const paragraph = ['Narwhals carry a spiral tusk.', 'They live in Arctic waters.']
      .map((t) => `<w:p><w:r><w:t>${t}</w:t></w:r></w:p>`)
      .join('');
    const docx = docxBomb(1, { paragraph });
    const got = await extractIsolated('r.docx', chunked(docx), LIMITS);
    expect(got).to.deep.equal({
      text: 'Narwhals carry a spiral tusk.\n\nThey live in Arctic waters.',
      meta: { format: 'docx' },
    });
    expect(await extractIsolated('notes.yaml', chunked(Buffer.from('a: 1\n')), LIMITS)).to.deep.equal({
      text: 'a: 1\n',
      meta: { format: 'text' },
    });
  });

  it('answers an extraction error with its type', async () => {
    const err = await extractionFailure(() => extractIsolated('x.pptx', chunked(Buffer.from('no zip')), LIMITS));
    expect(err).to.include({ type: 'InvalidContent' });
  });

  it('is ExtractionLimitExceeded past the memory limit, and the next asset is read', async () => {
    // 4 million small objects: about 300 MB of heap once parsed, past the thread's 128.
    const json = Buffer.from(`[${Array.from({ length: 4_000_000 }, () => '{"a":1}').join(',')}]`);
    const err = await extractionFailure(() => extractIsolated('big.json', chunked(json, 1 << 20), LIMITS));
    expect(err).to.include({ type: 'ExtractionLimitExceeded' });
    expect(err.message).to.equal(
      "Reading big.json exceeded the extraction's memory limit of 128 MB (EXTRACTION_MEMORY_MB)",
    );
    expect((await extractIsolated('after.md', chunked(Buffer.from('# after')), LIMITS)).text).to.equal('# after');
  });

  it('is ExtractionLimitExceeded past the time limit', async () => {
    // 95 MB of the shortest paragraphs (a 290 KB file): about 6 s of parsing on this machine's cores.
    const docx = docxBomb(95, { paragraph: '<w:p><w:r><w:t>ab</w:t></w:r></w:p>'.repeat(29_000) });
    const err = await extractionFailure(() =>
      extractIsolated('slow.docx', chunked(docx), { memoryMb: 1024, timeSeconds: 1, threads: 1 }),
    );
    expect(err).to.include({ type: 'ExtractionLimitExceeded' });
    expect(err.message).to.include("exceeded the extraction's time limit of 1 s");
  });
});
