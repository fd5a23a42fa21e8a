// The text of zipped documents: Word (.docx), PowerPoint (.pptx) and EPUB (.epub), read the way their
// standards define them, streamed: the zip by zip-parts.ts (every part counted as it inflates), the XML by
// xml-walk.ts (saxes, with running caps), the text counted as it is appended (TextBudget). Nothing builds a
// DOM, and each part is read once however often the document lists it.
// - docx (ECMA-376 part 1, WordprocessingML): the main document part that _rels/.rels names, its text runs
//   (`w:t`, tabs and breaks) a paragraph (`w:p`) at a time, paragraphs separated by a blank line; the
//   fallback branch of alternate content (`mc:Fallback`, a copy of the text for older readers) is skipped.
// - pptx (PresentationML): the slides in the order of presentation.xml's slide list, each slide's DrawingML
//   text runs (`a:t`), a line per paragraph (`a:p`), slides separated by a blank line; at most MAX_SLIDES.
// - EPUB (EPUB 3 / OPF 2): META-INF/container.xml names the package document, whose spine orders the XHTML
//   content documents; each becomes text as HTML does; at most MAX_SPINE_ITEMS, each at most
//   MAX_CHAPTER_BYTES.
import { ExtractionError, TextBudget } from './extraction-error';
import { htmlToText } from './html-text';
import { walkXml } from './xml-walk';
import { ZippedDocument } from './zip-parts';

/** Slides of a presentation read at most. */
export const MAX_SLIDES = 10_000;
/** Content documents of an EPUB's spine read at most. */
export const MAX_SPINE_ITEMS = 10_000;
/** Bytes of one EPUB chapter (made text whole, as HTML is). */
export const MAX_CHAPTER_BYTES = 32 * 1024 * 1024;
/** Bytes of a document's small parts: relationship lists, the package and container documents. */
const MAX_INDEX_BYTES = 8 * 1024 * 1024;

async function withDocument<T>(
  name: string,
  bytes: Buffer,
  what: string,
  read: (doc: ZippedDocument) => Promise<T>,
): Promise<T> {
  const doc = await ZippedDocument.open(name, bytes, what);
  try {
    return await read(doc);
  } finally {
    doc.close();
  }
}

/** Relationship ids (or types) to targets, resolved against `base` (a folder inside the zip). */
async function relationships(doc: ZippedDocument, path: string, base: string) {
  const byId = new Map<string, string>();
  const byType = new Map<string, string>();
  await walkXml(await doc.wholeText(path, MAX_INDEX_BYTES), `${doc.name}: ${path}`, {
    open: (tag, a) => {
      if (tag !== 'Relationship' || !a.Target || a.TargetMode === 'External') return;
      const target = resolvePath(base, a.Target);
      if (a.Id) byId.set(a.Id, target);
      if (a.Type && !byType.has(a.Type)) byType.set(a.Type, target);
    },
  });
  return { byId, byType };
}

function resolvePath(base: string, target: string): string {
  const parts = (target.startsWith('/') ? target.slice(1) : `${base}/${target}`).split('/');
  const out: string[] = [];
  for (const p of parts) {
    if (p === '..') out.pop();
    else if (p && p !== '.') out.push(p);
  }
  try {
    return decodeURIComponent(out.join('/'));
  } catch {
    return out.join('/');
  }
}

/** Paragraphs of text, each counted as it is appended and kept only when it holds more than whitespace. */
class Paragraphs {
  private readonly done: string[] = [];
  private line = '';
  constructor(private readonly budget: TextBudget) {}
  add(text: string) {
    this.line += this.budget.take(text);
  }
  end() {
    const trimmed = this.line.trim();
    if (trimmed) this.done.push(trimmed);
    this.line = '';
  }
  join(separator: string): string {
    this.end();
    return this.done.join(separator);
  }
}

const OFFICE_DOCUMENT = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument';

export function extractDocx(name: string, bytes: Buffer): Promise<string> {
  return withDocument(name, bytes, 'Word document', async (doc) => {
    const main = doc.has('_rels/.rels')
      ? ((await relationships(doc, '_rels/.rels', '')).byType.get(OFFICE_DOCUMENT) ?? 'word/document.xml')
      : 'word/document.xml';
    const paragraphs = new Paragraphs(new TextBudget(name));
    let inText = false;
    let skipped = 0; // depth inside mc:Fallback
    await walkXml(doc.textOf(main), `${name}: ${main}`, {
      open: (tag) => {
        if (tag === 'mc:Fallback' || skipped) skipped += 1;
        else if (tag === 'w:t') inText = true;
        else if (tag === 'w:tab') paragraphs.add('\t');
        else if (tag === 'w:br' || tag === 'w:cr') paragraphs.add('\n');
        else if (tag === 'w:noBreakHyphen') paragraphs.add('-');
      },
      text: (t) => {
        if (inText && !skipped) paragraphs.add(t);
      },
      close: (tag) => {
        if (skipped) skipped -= 1;
        else if (tag === 'w:t') inText = false;
        else if (tag === 'w:p') paragraphs.end();
      },
    });
    return paragraphs.join('\n\n');
  });
}

export function extractPptx(name: string, bytes: Buffer): Promise<string> {
  return withDocument(name, bytes, 'presentation', async (doc) => {
    const rels = (await relationships(doc, 'ppt/_rels/presentation.xml.rels', 'ppt')).byId;
    const order = new Set<string>();
    await walkXml(await doc.wholeText('ppt/presentation.xml', MAX_INDEX_BYTES), `${name}: ppt/presentation.xml`, {
      open: (tag, a) => {
        const target = tag === 'p:sldId' ? rels.get(a['r:id']) : undefined;
        if (!target) return;
        order.add(target);
        if (order.size > MAX_SLIDES)
          throw new ExtractionError('TooLarge', `${name} lists more than ${MAX_SLIDES} slides`);
      },
    });
    const budget = new TextBudget(name);
    const slides: string[] = [];
    for (const path of order) {
      const lines = new Paragraphs(budget);
      let inText = false;
      await walkXml(doc.textOf(path), `${name}: ${path}`, {
        open: (tag) => {
          if (tag === 'a:t') inText = true;
          else if (tag === 'a:br') lines.add('\n');
        },
        text: (t) => {
          if (inText) lines.add(t);
        },
        close: (tag) => {
          if (tag === 'a:t') inText = false;
          else if (tag === 'a:p') lines.end();
        },
      });
      const text = lines.join('\n');
      if (text) slides.push(text);
    }
    return slides.join('\n\n');
  });
}

export function extractEpub(name: string, bytes: Buffer): Promise<string> {
  return withDocument(name, bytes, 'EPUB', async (doc) => {
    let packagePath = '';
    await walkXml(await doc.wholeText('META-INF/container.xml', MAX_INDEX_BYTES), `${name}: META-INF/container.xml`, {
      open: (tag, a) => {
        if (tag === 'rootfile' && !packagePath && a['full-path']) packagePath = a['full-path'];
      },
    });
    if (!packagePath) throw doc.invalid('no package document');
    const base = packagePath.includes('/') ? packagePath.slice(0, packagePath.lastIndexOf('/')) : '';
    const manifest = new Map<string, { href: string; type: string }>();
    const spine = new Set<string>();
    await walkXml(await doc.wholeText(packagePath, MAX_INDEX_BYTES), `${name}: ${packagePath}`, {
      open: (tag, a) => {
        const local = tag.slice(tag.indexOf(':') + 1);
        if (local === 'item' && a.id && a.href) manifest.set(a.id, { href: a.href, type: a['media-type'] ?? '' });
        else if (local === 'itemref' && a.idref && a.linear !== 'no') {
          spine.add(a.idref);
          if (spine.size > MAX_SPINE_ITEMS) {
            throw new ExtractionError('TooLarge', `${name} lists more than ${MAX_SPINE_ITEMS} content documents`);
          }
        }
      },
    });
    const budget = new TextBudget(name);
    const chapters: string[] = [];
    const read = new Set<string>();
    for (const id of spine) {
      const item = manifest.get(id);
      if (!item || !/html/.test(item.type)) continue;
      const path = resolvePath(base, item.href);
      if (read.has(path)) continue;
      read.add(path);
      const text = htmlToText(await doc.wholeText(path, MAX_CHAPTER_BYTES));
      if (text) chapters.push(budget.take(text));
    }
    return chapters.join('\n\n');
  });
}
