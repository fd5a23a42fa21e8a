// The parts of a zipped document (docx, pptx, epub), judged by the bytes they really inflate to. yauzl reads
// the central directory (the 64-bit sizes of zip64 too, exactly up to 2^53), and the declared sizes of all
// entries must add up to at most MAX_UNZIPPED_BYTES before anything is inflated: an honest bomb stops there.
// Declared sizes are never trusted beyond that: every part is inflated as a stream and its bytes are counted
// as they come, per part (MAX_PART_BYTES) and over the document (MAX_UNZIPPED_BYTES); yauzl also fails a part
// the moment it inflates past the size its headers declare. So a zip whose headers lie is refused after
// inflating at most what it declared, never all of what it holds.
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import yauzl from 'yauzl';
import { ExtractionError, MAX_UNZIPPED_BYTES } from './extraction-error';

/** Bytes one part may inflate to; the parts a reader walks as a stream (slides, a document body). */
export const MAX_PART_BYTES = 100 * 1024 * 1024;
/** Entries a document's central directory may list (a real one lists tens to a few thousand). */
export const MAX_ZIP_ENTRIES = 50_000;

export class ZippedDocument {
  /** Bytes inflated so far, of every part read. */
  private inflated = 0;

  private constructor(
    private readonly zip: yauzl.ZipFile,
    private readonly entries: Map<string, yauzl.Entry>,
    readonly name: string,
    readonly what: string,
  ) {}

  /** Opens `bytes` (the document `name`, a `what`: "Word document", "EPUB", ...) and reads its directory. */
  static async open(name: string, bytes: Buffer, what: string): Promise<ZippedDocument> {
    const unreadable = (why: string) =>
      new ExtractionError('InvalidContent', `${name} is not a readable ${what}: ${why}`);
    let zip: yauzl.ZipFile;
    try {
      zip = await yauzl.fromBufferPromise(bytes, { lazyEntries: true, validateEntrySizes: true, decodeStrings: true });
    } catch (err) {
      throw unreadable((err as Error).message);
    }
    if (zip.entryCount > MAX_ZIP_ENTRIES) {
      throw new ExtractionError(
        'TooLarge',
        `${name} holds ${zip.entryCount} entries; at most ${MAX_ZIP_ENTRIES} are read`,
      );
    }
    const entries = new Map<string, yauzl.Entry>();
    let declared = 0;
    try {
      for await (const entry of zip.eachEntry()) {
        declared += entry.uncompressedSize;
        entries.set(entry.fileName, entry);
      }
    } catch (err) {
      throw unreadable((err as Error).message);
    }
    if (declared > MAX_UNZIPPED_BYTES) {
      throw new ExtractionError(
        'TooLarge',
        `${name} inflates to ${declared} bytes; at most ${MAX_UNZIPPED_BYTES} are read`,
      );
    }
    return new ZippedDocument(zip, entries, name, what);
  }

  has(path: string): boolean {
    return this.entries.has(path);
  }

  /**
   * The text of the part at `path`, decoded as UTF-8, in pieces as it inflates (never more than a chunk held);
   * at most `maxBytes` of it. A missing part is InvalidContent; one past a cap is TooLarge.
   */
  async *textOf(path: string, maxBytes = MAX_PART_BYTES): AsyncGenerator<string> {
    const entry = this.entries.get(path);
    if (!entry) throw this.invalid(`${path} is missing`);
    let stream: Readable;
    try {
      stream = await this.zip.openReadStreamPromise(entry);
    } catch (err) {
      throw this.invalid(`${path} cannot be read: ${(err as Error).message}`);
    }
    const decoder = new StringDecoder('utf8');
    let partBytes = 0;
    let first = true;
    try {
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        partBytes += chunk.length;
        this.inflated += chunk.length;
        if (partBytes > maxBytes) {
          throw new ExtractionError(
            'TooLarge',
            `${this.name}: ${path} inflates past ${maxBytes} bytes; at most that is read`,
          );
        }
        if (this.inflated > MAX_UNZIPPED_BYTES) {
          throw new ExtractionError(
            'TooLarge',
            `${this.name} inflates past ${MAX_UNZIPPED_BYTES} bytes; at most that is read`,
          );
        }
        let text = decoder.write(chunk);
        if (first && text) {
          text = text.replace(/^\uFEFF/, '');
          first = false;
        }
        if (text) yield text;
      }
    } catch (err) {
      if (err instanceof ExtractionError) throw err;
      // yauzl's own refusals: a part inflating past its declared size, a broken deflate stream.
      throw this.invalid(`${path} cannot be inflated: ${(err as Error).message}`);
    } finally {
      stream.destroy();
    }
    const rest = decoder.end();
    if (rest) yield rest;
  }

  /** The whole text of a small part (a relationship list, a package document, a chapter), up to `maxBytes`. */
  async wholeText(path: string, maxBytes: number): Promise<string> {
    let text = '';
    for await (const piece of this.textOf(path, maxBytes)) text += piece;
    return text;
  }

  invalid(why: string): ExtractionError {
    return new ExtractionError('InvalidContent', `${this.name} is not a readable ${this.what}: ${why}`);
  }

  close(): void {
    this.zip.close();
  }
}
