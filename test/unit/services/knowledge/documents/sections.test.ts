// Chunks that follow the document: the sections and blocks sections.ts reads in Markdown (and HTML, written as
// Markdown by htmlToText) and in plain text such as a rendered manual page, and the chunks chunkDocument makes
// of them: a heading line with the title and the section's path, never crossing a section, never cutting a
// block that fits, small sections joined, long blocks cut by length within the token limit.
import { expect } from 'chai';
import { chunkDocument, CHUNK_TOKENS, countTokens } from '../../../../../src/services/knowledge/documents/chunking';
import { htmlToText } from '../../../../../src/services/knowledge/documents/html-text';
import { formatOf, sectionsOf } from '../../../../../src/services/knowledge/documents/sections';

const words = (n: number, word = 'lorem') => Array.from({ length: n }, (_, i) => `${word}${i % 7}`).join(' ');

describe('chunks that follow the document', () => {
  it('reads Markdown headings into paths, and paragraphs, items, fences and tables into blocks', () => {
    const md = [
      '# Guide',
      'Intro paragraph.',
      '',
      '## Install',
      '- first item',
      '- second item',
      '```sh',
      'npm install',
      '',
      'npm start',
      '```',
      '| a | b |',
      '| 1 | 2 |',
      '### Linux',
      'On Linux, use apt.',
      '## Usage',
      'Run it.',
    ].join('\n');
    expect(sectionsOf(md, 'markdown')).to.deep.equal([
      { path: ['Guide'], blocks: ['Intro paragraph.'] },
      {
        path: ['Guide', 'Install'],
        blocks: ['- first item', '- second item', '```sh\nnpm install\n\nnpm start\n```', '| a | b |\n| 1 | 2 |'],
      },
      { path: ['Guide', 'Install', 'Linux'], blocks: ['On Linux, use apt.'] },
      { path: ['Guide', 'Usage'], blocks: ['Run it.'] },
    ]);
    expect(formatOf('docs/a.md')).to.equal('markdown');
    expect(formatOf('page.HTML')).to.equal('markdown');
    expect(formatOf('man1/sort.txt')).to.equal('text');
  });

  it('reads the margin headings of a rendered manual page, and underlined headings of plain text', () => {
    const man = [
      'SORT(1)                 User Commands                 SORT(1)',
      '',
      'NAME',
      '       sort - sort lines of text files',
      '',
      'DESCRIPTION',
      '       Write sorted concatenation of all FILE(s).',
      '',
      '       -n, --numeric-sort',
      '              compare according to string numerical value',
    ].join('\n');
    const sections = sectionsOf(man, 'text');
    expect(sections.map((s) => s.path)).to.deep.equal([
      ['SORT(1)                 User Commands                 SORT(1)'].slice(0, 0),
      ['NAME'],
      ['DESCRIPTION'],
    ]);
    expect(sections[2].blocks).to.have.length(2);
    expect(sectionsOf('Title\n=====\n\nBody text here.\n\nNot a heading.\nmore', 'text')).to.deep.equal([
      { path: ['Title'], blocks: ['Body text here.', 'Not a heading.\nmore'] },
    ]);
  });

  it('starts each chunk with the title and heading path, joins small sections, never crosses a large one', async () => {
    const md = `# Setup\n\n${words(50)}\n\n## Tiny\n\nshort one\n\n## Next\n\n${words(50, 'ipsum')}\n\n# Other\n\n${words(40, 'dolor')}`;
    const chunks = await chunkDocument(md, { title: 'manual', format: 'markdown' });
    expect(chunks.map((c) => c.content.split('\n')[0])).to.deep.equal([
      'manual › Setup',
      'manual › Setup › Tiny',
      'manual › Other',
    ]);
    // The small section "Tiny" joined "Next" under its own heading, which stays in the text.
    expect(chunks[1].content).to.include('short one').and.include('Next').and.include('ipsum0');
    expect(chunks[0].content).not.to.include('ipsum');
    for (const c of chunks) {
      expect(c.tokens).to.equal(countTokens(c.content));
      expect(c.tokens).to.be.at.most(CHUNK_TOKENS);
    }
    const again = await chunkDocument(md, { title: 'manual', format: 'markdown' });
    expect(again.map((c) => c.hash)).to.deep.equal(chunks.map((c) => c.hash));
  });

  it('keeps blocks whole while they fit and cuts a block longer than a chunk by length', async () => {
    const paragraphs = Array.from({ length: 12 }, (_, i) => `Paragraph ${i}. ${words(30, `w${i}x`)}`);
    const chunks = await chunkDocument(`# Doc\n\n${paragraphs.join('\n\n')}`, { title: 't', format: 'markdown' });
    expect(chunks.length).to.be.greaterThan(1);
    for (const p of paragraphs) expect(chunks.filter((c) => c.content.includes(p))).to.have.length(1);
    const long = await chunkDocument(`# Doc\n\n${words(2000)}`, { title: 't', format: 'markdown' });
    expect(long.length).to.be.at.least(8);
    for (const c of long) {
      expect(c.content.startsWith('t › Doc\n\n')).to.equal(true);
      expect(c.tokens).to.be.at.most(CHUNK_TOKENS);
    }
  });

  it('keeps the rows of an HTML table together and its headings as sections', async () => {
    const rows = Array.from({ length: 6 }, (_, i) => `<tr><td>fn${i}(x)</td><td>does ${i}</td></tr>`).join('\n');
    const html = `<h1>Functions</h1><p>Intro.</p><h2>String</h2><table>\n${rows}\n</table><h2>Math</h2><p>${words(60)}</p>`;
    const text = htmlToText(html);
    expect(text).to.include('| fn0(x) | does 0 |\n| fn1(x) | does 1 |');
    const sections = sectionsOf(text, 'markdown');
    expect(sections.map((s) => s.path.join('/'))).to.deep.equal(['Functions', 'Functions/String', 'Functions/Math']);
    expect(sections[1].blocks).to.have.length(1);
    const chunks = await chunkDocument(text, { title: 'functions', format: 'markdown' });
    expect(
      chunks.some((c) => c.content.startsWith('functions › Functions') && c.content.includes('| fn5(x) |')),
    ).to.equal(true);
  });

  it('chunks a thousand words of 1,000 letters quickly: such a word is never encoded whole', async () => {
    const text = Array.from({ length: 1000 }, () => 'x'.repeat(1000)).join('\n\n');
    // Encoding one such word whole takes js-tiktoken about a second: a thousand would pass the test's timeout.
    const chunks = await chunkDocument(text, { title: 'amplified', format: 'text' });
    expect(chunks).to.have.length(1000);
    for (const c of chunks) expect(c.tokens).to.be.within(1, CHUNK_TOKENS);
  });
});
