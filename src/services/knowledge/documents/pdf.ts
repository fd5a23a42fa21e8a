// The text of a PDF, with Mozilla's pdf.js (`pdfjs-dist`, its legacy build for Node; pinned in package.json):
// each page's text items in reading order as pdf.js gives them, a line break where pdf.js sees the end of a
// line, pages separated by a blank line. No rendering, no fonts loaded, no script evaluation. A file pdf.js
// cannot parse, or a password-protected one, is InvalidContent; a PDF with no text layer at all (a scan:
// we do no OCR) is InvalidContent too, so the job says why instead of ingesting nothing.
import { ExtractionError, TextBudget } from './extraction-error';

/** Pages read at most; a longer document is a TooLarge error (the size cap alone lets many tiny pages through). */
export const MAX_PDF_PAGES = 5_000;
/**
 * Bytes one of the PDF's streams may decode to (a page's content, a font): pdf.js grows a typed array, outside
 * any heap limit, for a stream of any size, so a small file of one deflated stream took 1.5 GB in 90 s. Our
 * patch of pdf.js (patches/pdfjs-dist+*.patch) refuses a stream past this; pdf.js then reads on without it.
 */
export const MAX_PDF_STREAM_BYTES = 64 * 1024 * 1024;

/** pdf.js's text item (its type lives under a path the lint rules reserve for our HTTP layer). */
interface TextItem {
  str: string;
  hasEOL: boolean;
}
type PdfJs = typeof import('pdfjs-dist/legacy/build/pdf.mjs');
let pdfjs: Promise<PdfJs> | undefined;
// pdf.js is an ES module; this compiles to CommonJS, where a dynamic import() loads it.
const loadPdfJs = () => (pdfjs ??= import('pdfjs-dist/legacy/build/pdf.mjs'));

export async function extractPdf(name: string, bytes: Buffer): Promise<{ text: string; meta: Record<string, string> }> {
  (globalThis as { __tarmacMaxDecodedStreamBytes?: number }).__tarmacMaxDecodedStreamBytes = MAX_PDF_STREAM_BYTES;
  const lib = await loadPdfJs();
  const task = lib.getDocument({
    data: new Uint8Array(bytes),
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    stopAtErrors: false,
    verbosity: 0,
  });
  try {
    let doc;
    try {
      doc = await task.promise;
    } catch (err) {
      const why = (err as Error).name === 'PasswordException' ? 'is password-protected' : 'is not a readable PDF';
      throw new ExtractionError('InvalidContent', `${name} ${why}: ${(err as Error).message}`);
    }
    if (doc.numPages > MAX_PDF_PAGES) {
      throw new ExtractionError('TooLarge', `${name} has ${doc.numPages} pages; at most ${MAX_PDF_PAGES} are read`);
    }
    const pages: string[] = [];
    const budget = new TextBudget(name);
    for (let p = 1; p <= doc.numPages; p++) {
      const page = await doc.getPage(p);
      const content = await page.getTextContent();
      pages.push(
        budget.take(
          content.items
            .filter((i) => 'str' in i)
            .map((i) => (i as TextItem).str + ((i as TextItem).hasEOL ? '\n' : ''))
            .join('')
            .trim(),
        ),
      );
      page.cleanup();
    }
    const text = pages.filter(Boolean).join('\n\n');
    if (!text.trim()) {
      throw new ExtractionError('InvalidContent', `${name} has no text layer (a scanned PDF? no OCR is done)`);
    }
    const info = ((await doc.getMetadata().catch(() => undefined))?.info ?? {}) as Record<string, unknown>;
    const meta: Record<string, string> = { pages: String(doc.numPages) };
    for (const [from, to] of [
      ['Title', 'title'],
      ['Author', 'author'],
      ['Subject', 'subject'],
    ] as const) {
      const v = info[from];
      if (typeof v === 'string' && v.trim()) meta[to] = v.trim().slice(0, 500);
    }
    return { text, meta };
  } finally {
    await task.destroy();
  }
}
