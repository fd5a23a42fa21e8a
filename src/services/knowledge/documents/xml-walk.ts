// XML parts of documents walked as a stream with saxes (a conforming, non-validating parser that resolves no
// external entity and expands no DTD), with running caps: nesting at most MAX_XML_DEPTH deep and at most
// MAX_XML_ELEMENTS elements, so that no part under the size caps costs more than a chunk and its open tags.
// Nothing is built but what the handlers keep (they count their text with a TextBudget).
import { SaxesParser } from 'saxes';
import { ExtractionError } from './extraction-error';

/** Nesting no real document reaches (Word's deepest tables and lists stay under 100). */
export const MAX_XML_DEPTH = 512;
/** Elements of one part: a 100 MB part of the shortest paragraphs holds about 3 million. */
export const MAX_XML_ELEMENTS = 20_000_000;

export interface XmlHandlers {
  open?: (tag: string, attrs: Record<string, string>) => void;
  close?: (tag: string) => void;
  text?: (t: string) => void;
}

/**
 * Walks the XML that `source` gives (a string, or pieces of one as a part inflates); `where` names the part
 * in errors. A malformed part is InvalidContent, one past a cap TooLarge; a handler's ExtractionError passes.
 */
export async function walkXml(source: string | AsyncIterable<string>, where: string, on: XmlHandlers): Promise<void> {
  const parser = new SaxesParser({ xmlns: false });
  let depth = 0;
  let elements = 0;
  parser.on('opentag', (node) => {
    depth += 1;
    elements += 1;
    if (depth > MAX_XML_DEPTH)
      throw new ExtractionError('TooLarge', `${where} nests deeper than ${MAX_XML_DEPTH} elements`);
    if (elements > MAX_XML_ELEMENTS) {
      throw new ExtractionError('TooLarge', `${where} holds more than ${MAX_XML_ELEMENTS} elements`);
    }
    on.open?.(node.name, node.attributes as Record<string, string>);
  });
  parser.on('closetag', (node) => {
    depth -= 1;
    on.close?.(node.name);
  });
  if (on.text) parser.on('text', on.text);
  try {
    if (typeof source === 'string') parser.write(source);
    else for await (const piece of source) parser.write(piece);
    parser.close();
  } catch (err) {
    if (err instanceof ExtractionError) throw err;
    throw new ExtractionError('InvalidContent', `${where} holds malformed XML: ${(err as Error).message}`);
  }
}
