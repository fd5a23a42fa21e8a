// Text of an asset, by the extension of its name: Markdown (.md, .markdown: kept as written), HTML (.html,
// .htm: html-text.ts), JSON (.json: every string, number and boolean as a `path: value` line), CSV (.csv, .tsv:
// each row a line), PDF (.pdf: pdf.ts), Word, PowerPoint and EPUB (.docx, .pptx, .epub: office.ts), Excel
// (.xlsx: xlsx.ts, streamed) and RTF (.rtf: rtf.ts, streamed); any other name (.txt, .yaml, .py, .xml, .log,
// none, ...) is plain text when its bytes are UTF-8 without NUL, and UnsupportedFormat (saying so) when they are
// not. The asset arrives as a stream: a spreadsheet or an RTF document is read as it flows, the other formats
// (whose libraries need the whole file) are collected first, within the job's size cap. The legacy binary
// office formats (.doc/.xls/.ppt) are UnsupportedFormat before a byte is read; bytes that are not what the name
// says are InvalidContent; text over MAX_TEXT_CHARS is TooLarge, counted as it is built. The text never holds a
// NUL character (PostgreSQL text cannot). `extractDocument` also answers the source's own metadata, as strings,
// for the chunks' `meta`. Knowledge base jobs run it on an extraction thread (extract-isolated.ts).
import type { Readable } from 'node:stream';
import { ExtractionError, MAX_TEXT_CHARS, TextBudget, tooMuchText } from './extraction-error';
import { htmlToText } from './html-text';
import { extractDocx, extractEpub, extractPptx } from './office';
import { extractPdf } from './pdf';
import { extractRtf } from './rtf';
import { extractXlsx } from './xlsx';

export { ExtractionError, htmlToText };

/** Names that say "text": binary bytes under one are InvalidContent (under any other name, UnsupportedFormat). */
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
  'UTF-8 text of any name, Markdown, HTML, JSON, CSV, PDF, Word (.docx), Excel (.xlsx), PowerPoint (.pptx), EPUB and RTF are';
/** Why a format we recognize is not read, before a byte of it is (docs/knowledge-bases.md says more). */
const UNSUPPORTED_BECAUSE: Record<string, string> = {
  doc: 'the legacy binary Word format is not read; save it as .docx',
  xls: 'the legacy binary Excel format is not read; save it as .xlsx',
  ppt: 'the legacy binary PowerPoint format is not read; save it as .pptx',
};

function unsupported(ext: string, why = UNSUPPORTED_BECAUSE[ext] ?? SUPPORTED): ExtractionError {
  return new ExtractionError(
    'UnsupportedFormat',
    `${ext ? `.${ext} files are` : 'this file is'} not supported (${why})`,
  );
}

/** Binary formats read by a library of their own, never as text. */
const isDocumentFormat = (ext: string) => ext === 'pdf' || ext === 'xlsx' || ext === 'rtf' || Boolean(ZIPPED[ext]);

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

/**
 * Text of a file of any other name: its bytes when they are UTF-8 without NUL. Binary bytes are InvalidContent
 * under a name that says text (.txt, .md, ...), UnsupportedFormat under any other.
 */
function plainText(name: string, ext: string, bytes: Buffer): string {
  if (TEXT.has(ext)) {
    if (bytes.includes(0)) throw new ExtractionError('InvalidContent', `${name} is binary, not text`);
    return decodeUtf8(bytes, name);
  }
  const binary = () => unsupported(ext, `its bytes are not UTF-8 text; ${SUPPORTED}`);
  if (bytes.includes(0)) throw binary();
  try {
    return decodeUtf8(bytes, name);
  } catch {
    throw binary();
  }
}

export function extractText(name: string, bytes: Buffer): string {
  const ext = extensionOf(name);
  let text: string;
  if (HTML.has(ext)) {
    text = htmlToText(decodeUtf8(bytes, name));
  } else if (ext === 'json') {
    let value: unknown;
    try {
      value = JSON.parse(decodeUtf8(bytes, name));
    } catch {
      throw new ExtractionError('InvalidContent', `${name} is not valid JSON`);
    }
    text = jsonToText(value, name);
  } else if (UNSUPPORTED_BECAUSE[ext] || isDocumentFormat(ext)) {
    throw unsupported(ext);
  } else {
    text = plainText(name, ext, bytes);
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
    } else if (!UNSUPPORTED_BECAUSE[ext]) {
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

/** Nesting of a JSON document read at most (each level is a frame of the walk). */
export const MAX_JSON_DEPTH = 512;

function jsonToText(value: unknown, name: string): string {
  const lines: string[] = [];
  const budget = new TextBudget(name);
  const walk = (v: unknown, path: string, depth: number) => {
    if (depth > MAX_JSON_DEPTH)
      throw new ExtractionError('TooLarge', `${name} nests deeper than ${MAX_JSON_DEPTH} levels`);
    if (Array.isArray(v)) v.forEach((item, i) => walk(item, `${path}[${i}]`, depth + 1));
    else if (v && typeof v === 'object')
      for (const [k, item] of Object.entries(v)) walk(item, path ? `${path}.${k}` : k, depth + 1);
    else if (v !== null && v !== undefined) lines.push(budget.take(path ? `${path}: ${String(v)}` : String(v)));
  };
  walk(value, '', 0);
  return lines.join('\n');
}
