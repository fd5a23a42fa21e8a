// Reading pages on extraction threads (src/services/data-connectors/sources/page-reader.ts): the same text,
// title and links as on the calling thread, many pages at once, and a page that cannot be read fails alone.
import { expect } from 'chai';
import { readPage } from '../../../../../src/services/data-connectors/sources/html-text';
import { readPageOffThread } from '../../../../../src/services/data-connectors/sources/page-reader';
import { HTML_PAGES } from '../../../../fixtures/html-pages';

describe('data connector sources: reading pages on extraction threads', () => {
  it('answers what readPage answers, for many pages in flight on two threads', async () => {
    const pages = Object.values(HTML_PAGES);
    const many = [...pages, ...pages, ...pages];
    const got = await Promise.all(many.map(([html, url]) => readPageOffThread(html, url, 2)));
    const plain = (x: unknown) => JSON.parse(JSON.stringify(x));
    expect(plain(got)).to.deep.equal(plain(many.map(([html, url]) => readPage(html, url))));
  });

  it('reads on the calling thread with 0 threads', async () => {
    const [html, url] = HTML_PAGES['test page a'];
    expect(await readPageOffThread(html, url, 0)).to.deep.equal(readPage(html, url));
  });

  it('rejects a page the reader throws on, and reads the next one', async () => {
    const failed = await readPageOffThread('', 'http://site.test/', 1).then(
      () => 'read',
      (err: Error) => err.message,
    );
    expect(failed).to.not.equal('read');
    const [html, url] = HTML_PAGES['bench page'];
    expect((await readPageOffThread(html, url, 1)).title).to.equal('Page 1');
  });
});
