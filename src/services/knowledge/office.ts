// The text of zipped documents: Word (.docx, with mammoth: its raw text, a paragraph a line, pptx (.pptx) and
// EPUB (.epub). No library for pptx or EPUB text is both well kept and small (officeparser pulls 140 MB with
// OCR), so those two are read the way their standards define them, with the libraries exceljs and mammoth
// already use: the zip with jszip, the XML with saxes (a conforming, non-validating parser that resolves no
// external entity). pptx (ECMA-376 part 1, PresentationML): the slides in the order of presentation.xml's
// slide list, each slide's DrawingML text runs (`a:t`), a line per paragraph (`a:p`), slides separated by a
// blank line. EPUB (EPUB 3 / OPF 2): META-INF/container.xml names the package document, whose spine orders
// the XHTML content documents; each becomes text as HTML does. Before anything is inflated, the declared sizes
// of the zip's entries must add up to at most MAX_UNZIPPED_BYTES (a zip bomb is TooLarge, not an OOM).
import JSZip from 'jszip';
import mammoth from 'mammoth';
import { SaxesParser } from 'saxes';
import { ExtractionError, MAX_UNZIPPED_BYTES } from './extraction-error';
import { htmlToText } from './html-text';

async function openZip(name: string, bytes: Buffer, what: string): Promise<JSZip> {
  let zip: JSZip;
  try {
    zip = await JSZip.loadAsync(bytes);
  } catch (err) {
    throw new ExtractionError('InvalidContent', `${name} is not a readable ${what}: ${(err as Error).message}`);
  }
  let declared = 0;
  for (const file of Object.values(zip.files)) {
    declared += (file as unknown as { _data?: { uncompressedSize?: number } })._data?.uncompressedSize ?? 0;
  }
  if (declared > MAX_UNZIPPED_BYTES) {
    throw new ExtractionError(
      'TooLarge',
      `${name} inflates to ${declared} bytes; at most ${MAX_UNZIPPED_BYTES} are read`,
    );
  }
  return zip;
}

async function part(zip: JSZip, path: string, name: string, what: string): Promise<string> {
  const file = zip.file(path);
  if (!file) throw new ExtractionError('InvalidContent', `${name} is not a readable ${what}: ${path} is missing`);
  return file.async('string');
}

/** Walks `xml` with saxes; a malformed part is InvalidContent. */
function walkXml(
  xml: string,
  name: string,
  on: {
    open?: (tag: string, attrs: Record<string, string>) => void;
    close?: (tag: string) => void;
    text?: (t: string) => void;
  },
) {
  const parser = new SaxesParser({ xmlns: false });
  if (on.open) parser.on('opentag', (node) => on.open!(node.name, node.attributes as Record<string, string>));
  if (on.close) parser.on('closetag', (node) => on.close!(node.name));
  if (on.text) parser.on('text', on.text);
  try {
    parser.write(xml).close();
  } catch (err) {
    throw new ExtractionError('InvalidContent', `${name} holds malformed XML: ${(err as Error).message}`);
  }
}

/** Relationship ids to targets, resolved against `base` (a folder inside the zip). */
function relationships(xml: string, name: string, base: string): Map<string, string> {
  const targets = new Map<string, string>();
  walkXml(xml, name, {
    open: (tag, a) => {
      if (tag === 'Relationship' && a.Id && a.Target) targets.set(a.Id, resolvePath(base, a.Target));
    },
  });
  return targets;
}

function resolvePath(base: string, target: string): string {
  const parts = (target.startsWith('/') ? target.slice(1) : `${base}/${target}`).split('/');
  const out: string[] = [];
  for (const p of parts) {
    if (p === '..') out.pop();
    else if (p && p !== '.') out.push(p);
  }
  return decodeURIComponent(out.join('/'));
}

export async function extractDocx(name: string, bytes: Buffer): Promise<string> {
  await openZip(name, bytes, 'Word document');
  let value: string;
  try {
    ({ value } = await mammoth.extractRawText({ buffer: bytes }));
  } catch (err) {
    throw new ExtractionError('InvalidContent', `${name} is not a readable Word document: ${(err as Error).message}`);
  }
  return value;
}

export async function extractPptx(name: string, bytes: Buffer): Promise<string> {
  const what = 'presentation';
  const zip = await openZip(name, bytes, what);
  const rels = relationships(await part(zip, 'ppt/_rels/presentation.xml.rels', name, what), name, 'ppt');
  const order: string[] = [];
  walkXml(await part(zip, 'ppt/presentation.xml', name, what), name, {
    open: (tag, a) => {
      const target = tag === 'p:sldId' ? rels.get(a['r:id']) : undefined;
      if (target) order.push(target);
    },
  });
  const slides: string[] = [];
  for (const path of order) {
    const lines: string[] = [];
    let line = '';
    let inText = false;
    walkXml(await part(zip, path, name, what), name, {
      open: (tag) => {
        if (tag === 'a:t') inText = true;
        else if (tag === 'a:br') line += '\n';
      },
      text: (t) => {
        if (inText) line += t;
      },
      close: (tag) => {
        if (tag === 'a:t') inText = false;
        else if (tag === 'a:p') {
          if (line.trim()) lines.push(line.trim());
          line = '';
        }
      },
    });
    if (lines.length) slides.push(lines.join('\n'));
  }
  return slides.join('\n\n');
}

export async function extractEpub(name: string, bytes: Buffer): Promise<string> {
  const what = 'EPUB';
  const zip = await openZip(name, bytes, what);
  let packagePath = '';
  walkXml(await part(zip, 'META-INF/container.xml', name, what), name, {
    open: (tag, a) => {
      if (tag === 'rootfile' && !packagePath && a['full-path']) packagePath = a['full-path'];
    },
  });
  if (!packagePath) throw new ExtractionError('InvalidContent', `${name} is not a readable EPUB: no package document`);
  const base = packagePath.includes('/') ? packagePath.slice(0, packagePath.lastIndexOf('/')) : '';
  const manifest = new Map<string, { href: string; type: string }>();
  const spine: string[] = [];
  walkXml(await part(zip, packagePath, name, what), name, {
    open: (tag, a) => {
      const local = tag.slice(tag.indexOf(':') + 1);
      if (local === 'item' && a.id && a.href) manifest.set(a.id, { href: a.href, type: a['media-type'] ?? '' });
      else if (local === 'itemref' && a.idref && a.linear !== 'no') spine.push(a.idref);
    },
  });
  const chapters: string[] = [];
  for (const id of spine) {
    const item = manifest.get(id);
    if (!item || !/html/.test(item.type)) continue;
    const text = htmlToText(await part(zip, resolvePath(base, item.href), name, what));
    if (text) chapters.push(text);
  }
  return chapters.join('\n\n');
}
