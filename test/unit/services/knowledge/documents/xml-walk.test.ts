// XML parts walked as a stream with running caps (src/services/knowledge/documents/xml-walk.ts): pieces split anywhere
// give the same events, nesting and element counts past their caps are TooLarge, malformed XML is
// InvalidContent, and a handler's own ExtractionError passes through unchanged.
import { expect } from 'chai';
import { ExtractionError, tooMuchText } from '../../../../../src/services/knowledge/documents/extraction-error';
import { MAX_XML_DEPTH, walkXml } from '../../../../../src/services/knowledge/documents/xml-walk';
import { extractionFailure } from '../../../../harness/extraction-failure';

async function* pieces(text: string, size: number) {
  for (let i = 0; i < text.length; i += size) yield text.slice(i, i + size);
}

describe('walking XML parts', () => {
  it('gives the same text however the part is cut', async () => {
    const xml = '<a><b k="v">one</b><b>two &amp; three</b></a>';
    for (const size of [1, 3, 7, xml.length]) {
      const seen: string[] = [];
      await walkXml(pieces(xml, size), 'p.xml', {
        open: (tag, attrs) => seen.push(`<${tag}${attrs.k ? ` ${attrs.k}` : ''}>`),
        text: (t) => seen.push(t),
        close: (tag) => seen.push(`</${tag}>`),
      });
      expect(seen.join('')).to.equal('<a><b v>one</b><b>two & three</b></a>');
    }
  });

  it('refuses nesting past MAX_XML_DEPTH, and takes it up to that', async () => {
    const nest = (n: number) => `${'<d>'.repeat(n)}${'</d>'.repeat(n)}`;
    await walkXml(nest(MAX_XML_DEPTH), 'ok.xml', {});
    const err = await extractionFailure(() => walkXml(pieces(nest(MAX_XML_DEPTH + 1), 64), 'deep.xml', {}));
    expect(err).to.include({ type: 'TooLarge' });
    expect(err.message).to.equal(`deep.xml nests deeper than ${MAX_XML_DEPTH} elements`);
  });

  it('is InvalidContent for malformed XML, and expands no entity it was not given', async () => {
    expect(await extractionFailure(() => walkXml('<a><b></a>', 'bad.xml', {}))).to.include({ type: 'InvalidContent' });
    const laughs = '<!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><l>&b;</l>';
    expect(await extractionFailure(() => walkXml(laughs, 'laughs.xml', { text: () => undefined }))).to.include({
      type: 'InvalidContent',
    });
  });

  it("passes a handler's ExtractionError through", async () => {
    const err = await extractionFailure(() =>
      walkXml('<a>text</a>', 'p.xml', {
        text: () => {
          throw tooMuchText('p.docx');
        },
      }),
    );
    expect(err).to.include({ type: 'TooLarge' });
    expect(err.message).to.include('p.docx holds more than');
  });
});
