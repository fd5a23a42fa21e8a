// Text of an asset, by the extension of its name: plain text (.txt, .text, .log and names without an
// extension, when the bytes are UTF-8 without NUL), Markdown (.md, .markdown: kept as written), HTML (.html,
// .htm: html-text.ts), JSON (.json: every string, number and boolean as a `path: value` line), CSV (.csv, .tsv:
// each row a line), PDF (.pdf: pdf.ts), Word, PowerPoint and EPUB (.docx, .pptx, .epub: office.ts) and Excel
// (.xlsx: xlsx.ts, streamed) and RTF (.rtf: rtf.ts, streamed). The asset arrives as a stream: a spreadsheet or
// an RTF document is read as it flows, the other formats (whose libraries need the whole file) are collected
// first, within the job's size cap. Anything else (legacy .doc/.xls/.ppt, images, ...) is an UnsupportedFormat error for that asset, found before a byte
// is read; bytes that are not what the name says are InvalidContent; text over MAX_TEXT_CHARS is TooLarge. The
// text never holds a NUL character (PostgreSQL text cannot). `extractDocument` also answers the source's own
// metadata, as strings, for the chunks' `meta`.
import type { Readable } from 'node:stream';
import { ExtractionError, MAX_TEXT_CHARS, tooMuchText } from './extraction-error';
import { htmlToText } from './html-text';
import { extractDocx, extractEpub, extractPptx } from './office';
import { extractPdf } from './pdf';
import { extractRtf } from './rtf';
import { extractXlsx } from './xlsx';

export { ExtractionError, htmlToText };

const TEXT = new Set(['txt', 'text', 'log', 'md', 'markdown', 'csv', 'tsv', '']);
const HTML = new Set(['html', 'htm', 'xhtml']);
const FORMAT: Record<string, string> = { md: 'markdown', markdown: 'markdown', csv: 'csv', tsv: 'csv', json: 'json' };
/** Zipped documents read whole (their libraries need random access to the zip). */
const ZIPPED: Record<string, (name: string, bytes: Buffer) => Promise<string>> = {
  docx: extractDocx,
  pptx: extractPptx,
  epub: extractEpub,
};
const SUPPORTED =
  'text, Markdown, HTML, JSON, CSV, PDF, Word (.docx), Excel (.xlsx), PowerPoint (.pptx), EPUB and RTF are';
/** Why a format we recognize is not read (docs/knowledge-bases.md says more). */
const UNSUPPORTED_BECAUSE: Record<string, string> = {
  doc: 'the legacy binary Word format is not read; save it as .docx',
  xls: 'the legacy binary Excel format is not read; save it as .xlsx',
  ppt: 'the legacy binary PowerPoint format is not read; save it as .pptx',
};

function unsupported(ext: string): ExtractionError {
  const why = UNSUPPORTED_BECAUSE[ext] ?? SUPPORTED;
  return new ExtractionError('UnsupportedFormat', `.${ext} files are not supported (${why})`);
}

/**
 * Whether a job reads `name` up to MAX_STREAMED_INGEST_BYTES: spreadsheets, streamed (their bytes never become
 * memory) and the format whose large files are common. RTF is streamed too, but its JavaScript tokenizer costs
 * about 0.4 s of CPU a MB on the worker's event loop, so it keeps the common cap.
 */
export const readsLargeFiles = (name: string) => extensionOf(name) === 'xlsx';

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
    throw unsupported(ext);
  }
  return text.replace(/\u0000/g, '');
}

export interface Extracted {
  text: string;
  /** The source's own metadata (`format`; a PDF's `title`, `author`, `pages`; an HTML page's `title`). */
  meta: Record<string, string>;
}

async function readAll(stream: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

/**
 * The text and metadata of the asset `name` whose bytes `stream` gives (the caller has checked its size);
 * `signal` stops a long read. The stream is consumed or destroyed.
 */
export async function extractDocument(name: string, stream: Readable, signal?: AbortSignal): Promise<Extracted> {
  const ext = extensionOf(name);
  let extracted: Extracted;
  try {
    if (ext === 'xlsx') {
      extracted = { text: await extractXlsx(name, stream, signal), meta: { format: 'xlsx' } };
    } else if (ext === 'rtf') {
      extracted = { text: await extractRtf(name, stream, signal), meta: { format: 'rtf' } };
    } else if (ext === 'pdf' || ZIPPED[ext] || TEXT.has(ext) || HTML.has(ext) || ext === 'json') {
      const bytes = await readAll(stream);
      if (ext === 'pdf') {
        const pdf = await extractPdf(name, bytes);
        extracted = { text: pdf.text, meta: { format: 'pdf', ...pdf.meta } };
      } else if (ZIPPED[ext]) {
        extracted = { text: await ZIPPED[ext](name, bytes), meta: { format: ext } };
        if (!extracted.text.trim()) throw new ExtractionError('InvalidContent', `${name} holds no text`);
      } else {
        extracted = {
          text: extractText(name, bytes),
          meta: { format: HTML.has(ext) ? 'html' : (FORMAT[ext] ?? 'text') },
        };
        if (HTML.has(ext)) {
          const title = /<title\b[^>]*>([^<]{1,500})<\/title>/i.exec(bytes.toString('utf8'))?.[1];
          if (title) extracted.meta.title = htmlToText(title);
        }
      }
    } else {
      throw unsupported(ext);
    }
  } finally {
    stream.destroy();
  }
  if (extracted.text.length > MAX_TEXT_CHARS) throw tooMuchText(name);
  extracted.text = extracted.text.replace(/\u0000/g, '');
  return extracted;
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
