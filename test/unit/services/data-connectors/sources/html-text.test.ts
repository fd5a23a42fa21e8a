// The webscraper's page reading (src/services/data-connectors/sources/html-text.ts): main text, title and
// links of each page of test/fixtures/html-pages.ts, exactly as recorded in html-pages.expected.json.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readPage } from '../../../../../src/services/data-connectors/sources/html-text';
import { HTML_PAGES } from '../../../../fixtures/html-pages';

const expected: Record<string, { title?: string; text: string; links: string[] }> = JSON.parse(
  readFileSync(join(__dirname, '../../../../../../test/fixtures/html-pages.expected.json'), 'utf8'),
);

describe('data connector sources: reading an HTML page', () => {
  for (const [name, [html, url]] of Object.entries(HTML_PAGES)) {
    it(`reads "${name}" as recorded`, () => {
      expect(JSON.parse(JSON.stringify(readPage(html, url)))).to.deep.equal(expected[name]);
    });
  }

  it('keeps the main text and leaves out navigation, footers and scripts', () => {
    const page = readPage(HTML_PAGES['long article'][0], HTML_PAGES['long article'][1]);
    expect(page.title).to.equal('A long article | Example News');
    expect(page.text).to.include('Paragraph 7 of the article').and.include('été & a non breaking');
    expect(page.text).to.not.include('Copyright footer').and.not.include('track()').and.not.include('Popular');
    expect(page.links).to.include('https://other.example/x').and.include('http://news.test/up.html?q=1&r=2');
    expect(page.links.some((l) => l.startsWith('javascript:') || l.startsWith('mailto:'))).to.equal(false);
  });
});
