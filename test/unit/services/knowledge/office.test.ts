// The zipped document readers (src/services/knowledge/office.ts) on what the HTTP tests do not make: a zip bomb
// (entries declaring more than MAX_UNZIPPED_BYTES inflated) is TooLarge before anything is inflated.
import { expect } from 'chai';
import JSZip from 'jszip';
import { ExtractionError, MAX_UNZIPPED_BYTES } from '../../../../src/services/knowledge/extraction-error';
import { extractDocx, extractEpub, extractPptx } from '../../../../src/services/knowledge/office';

describe('office documents', () => {
  it('refuses a zip whose entries inflate past MAX_UNZIPPED_BYTES, for every zipped format', async () => {
    const zip = new JSZip();
    const megabyte = Buffer.alloc(1024 * 1024);
    for (let i = 0; i <= MAX_UNZIPPED_BYTES / megabyte.length; i++) zip.file(`word/part${i}.xml`, megabyte);
    const bomb = await zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' });
    expect(bomb.length).to.be.lessThan(MAX_UNZIPPED_BYTES / 100);
    for (const read of [extractDocx, extractPptx, extractEpub]) {
      const err = await read('bomb.zip', bomb).then(
        () => undefined,
        (e: ExtractionError) => e,
      );
      expect(err).to.be.instanceOf(ExtractionError).and.include({ type: 'TooLarge' });
      expect(err!.message).to.include(`at most ${MAX_UNZIPPED_BYTES} are read`);
    }
  });
});
