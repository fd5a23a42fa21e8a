// Text of an asset, by the extension of its name: plain text (.txt, .text, .log and names without an
// extension, when the bytes are UTF-8 without NUL), Markdown (.md, .markdown: kept as written), HTML (.html,
// .htm: tags, comments, scripts and styles removed, block elements become line breaks, entities decoded), JSON
// (.json: every string, number and boolean as a `path: value` line), CSV (.csv, .tsv: each row a line), PDF
// (.pdf: pdf.ts). Anything else (Office files, images, ...) is an UnsupportedFormat error for that asset;
// bytes that are not what the name says are InvalidContent. The text never holds a NUL character
// (PostgreSQL text cannot). `extractDocument` also answers the source's own metadata, as strings, for the
// chunks' `meta`.
import { ExtractionError } from './extraction-error';
import { extractPdf } from './pdf';

export { ExtractionError };

const TEXT = new Set(['txt', 'text', 'log', 'md', 'markdown', 'csv', 'tsv', '']);
const HTML = new Set(['html', 'htm', 'xhtml']);
const FORMAT: Record<string, string> = { md: 'markdown', markdown: 'markdown', csv: 'csv', tsv: 'csv', json: 'json' };

export function extensionOf(name: string): string {
  const base = name.slice(name.lastIndexOf('/') + 1);
  const dot = base.lastIndexOf('.');
  return dot <= 0 ? '' : base.slice(dot + 1).toLowerCase();
}

function decodeUtf8(bytes: Buffer, name: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes).replace(/^\uFEFF/, '');
  } catch {
    throw new ExtractionError('InvalidContent', `${name} is not UTF-8 text`);
  }
}

export function extractText(name: string, bytes: Buffer): string {
  const ext = extensionOf(name);
  let text: string;
  if (TEXT.has(ext)) {
    if (bytes.includes(0)) throw new ExtractionError('InvalidContent', `${name} is binary, not text`);
    text = decodeUtf8(bytes, name);
  } else if (HTML.has(ext)) {
    text = htmlToText(decodeUtf8(bytes, name));
  } else if (ext === 'json') {
    let value: unknown;
    try {
      value = JSON.parse(decodeUtf8(bytes, name));
    } catch {
      throw new ExtractionError('InvalidContent', `${name} is not valid JSON`);
    }
    text = jsonToText(value);
  } else {
    throw new ExtractionError(
      'UnsupportedFormat',
      `.${ext} files are not supported (text, Markdown, HTML, JSON, CSV and PDF are)`,
    );
  }
  return text.replace(/\u0000/g, '');
}

export interface Extracted {
  text: string;
  /** The source's own metadata (`format`; a PDF's `title`, `author`, `pages`; an HTML page's `title`). */
  meta: Record<string, string>;
}

/** The text and metadata of an asset: extractText, and PDFs (asynchronous: pdf.js). */
export async function extractDocument(name: string, bytes: Buffer): Promise<Extracted> {
  const ext = extensionOf(name);
  if (ext === 'pdf') {
    const pdf = await extractPdf(name, bytes);
    return { text: pdf.text.replace(/\u0000/g, ''), meta: { format: 'pdf', ...pdf.meta } };
  }
  const text = extractText(name, bytes);
  const meta: Record<string, string> = { format: HTML.has(ext) ? 'html' : (FORMAT[ext] ?? 'text') };
  if (HTML.has(ext)) {
    const title = /<title\b[^>]*>([^<]{1,500})<\/title>/i.exec(bytes.toString('utf8'))?.[1];
    if (title) meta.title = htmlToText(title);
  }
  return { text, meta };
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };
const BLOCK = /<\/?(p|div|br|hr|li|ul|ol|tr|td|th|table|h[1-6]|section|article|header|footer|blockquote|pre)\b[^>]*>/gi;

/** A careful minimal HTML-to-text (no library is a dependency): good for readable pages, not a parser. */
export function htmlToText(html: string): string {
  return html
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<(script|style|noscript|template)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(BLOCK, '\n')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, code: string) => {
      if (code[0] === '#') {
        const n = code[1] === 'x' || code[1] === 'X' ? parseInt(code.slice(2), 16) : parseInt(code.slice(1), 10);
        return n > 0 && n <= 0x10ffff && !(n >= 0xd800 && n <= 0xdfff) ? String.fromCodePoint(n) : ' ';
      }
      return ENTITIES[code.toLowerCase()] ?? whole;
    })
    .replace(/[ \t\r\f\v]+/g, ' ')
    .replace(/ *\n[\n ]*/g, '\n')
    .trim();
}

function jsonToText(value: unknown): string {
  const lines: string[] = [];
  const walk = (v: unknown, path: string) => {
    if (Array.isArray(v)) v.forEach((item, i) => walk(item, `${path}[${i}]`));
    else if (v && typeof v === 'object')
      for (const [k, item] of Object.entries(v)) walk(item, path ? `${path}.${k}` : k);
    else if (v !== null && v !== undefined) lines.push(path ? `${path}: ${String(v)}` : String(v));
  };
  walk(value, '');
  return lines.join('\n');
}
