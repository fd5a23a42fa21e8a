// Reading pages on extraction threads (src/services/data-connectors/sources/page-reader.ts): the same text,
// title and links as on the calling thread, many pages at once, a page that cannot be read fails alone, and idle
// threads do not keep the process alive.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
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

  it('lets the process exit while its threads are idle (they would end only after 30 s)', async () => {
    const [html, url] = HTML_PAGES['bench page'];
    const program = `
      const { readPageOffThread } = require(${JSON.stringify(require.resolve('../../../../../src/services/data-connectors/sources/page-reader'))});
      readPageOffThread(${JSON.stringify(html)}, ${JSON.stringify(url)}, 2).then((page) => console.log(page.title));`;
    const started = Date.now();
    const { stdout } = await promisify(execFile)(process.execPath, ['-e', program], { timeout: 20_000 });
    expect(stdout.trim()).to.equal('Page 1');
    expect(Date.now() - started, 'exited without waiting for the idle threads').to.be.below(10_000);
  });
});
