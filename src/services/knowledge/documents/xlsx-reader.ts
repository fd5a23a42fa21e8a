// exceljs's streaming WorkbookReader with a bounded spool. A worksheet stored in the zip before the shared
// strings table or the workbook's relationships (exceljs's own streaming writer and Excel put them last) cannot
// be read until those have been: exceljs 4.4.0 copies it to a `tmp` file of unbounded size, removed only once
// the sheet has been read, never on an error or a stop, so a small compressed workbook could fill the worker's
// disk. `SpoolingWorkbookReader.parse` is exceljs's own `parse` (lib/stream/xlsx/workbook-reader.js) with that
// copy replaced by a `SheetSpool`: files in a directory of the read's own, at most MAX_SPOOLED_XML_BYTES of
// inflated XML in all (past it, TooLarge), deleted by `remove()` on every path.
import './exceljs-iterate-stream'; // before exceljs loads
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { stream as excelStream } from 'exceljs';
import { processExists } from '../../../runtime/sandbox/processes';
import { iterateStream } from './exceljs-iterate-stream';
import { ExtractionError, MAX_SPOOLED_XML_BYTES } from './extraction-error';

/** The zip parser exceljs's reader uses (its own dependency, resolved from its file as it resolves it). */
const unzipper = createRequire(require.resolve('exceljs/lib/stream/xlsx/workbook-reader.js'))('unzipper') as {
  Parse(options: { forceStream: true }): NodeJS.ReadWriteStream;
};

type ZipEntry = Readable & { path: string; autodrain(): void };
type ReaderEvent = { eventType: string; value: unknown };

/** The parts of exceljs's WorkbookReader that its `parse` uses (untyped internals of exceljs 4.4.0). */
interface ReaderInternals {
  input: Readable;
  sharedStrings?: unknown[];
  workbookRels?: unknown[];
  _parseRels(entry: ZipEntry): Promise<void>;
  _parseWorkbook(entry: ZipEntry): Promise<void>;
  _parseSharedStrings(entry: ZipEntry): AsyncGenerator<ReaderEvent>;
  _parseStyles(entry: ZipEntry): Promise<void>;
  _parseWorksheet(rows: AsyncIterable<unknown>, sheetNo: string): Generator<ReaderEvent>;
  _parseHyperlinks(links: AsyncIterable<unknown>, sheetNo: string): Generator<ReaderEvent>;
}

export interface SpoolLimits {
  /** Where the read's own directory is made (the worker's temporary directory). */
  dir: string;
  /** Inflated bytes of all the spooled worksheets of one workbook. */
  maxBytes: number;
}

export const defaultSpoolLimits = (): SpoolLimits => ({ dir: os.tmpdir(), maxBytes: MAX_SPOOLED_XML_BYTES });

/** A spool directory's name: the prefix, the pid of the worker reading, then mkdtemp's suffix. */
const SPOOL_PREFIX = 'tarmac-xlsx-';
const SPOOL_NAME = new RegExp(`^${SPOOL_PREFIX}(\\d+)-`);

/**
 * Removes the spools of workers that are gone: a worker killed mid-read leaves its spool behind, and several
 * workers may share `dir`, so only a spool whose worker (the pid in its name) no longer runs is removed.
 * Answers how many were removed.
 */
export async function removeSpoolsOfGoneWorkers(dir = os.tmpdir()): Promise<number> {
  let removed = 0;
  for (const name of await fsp.readdir(dir).catch(() => [] as string[])) {
    const pid = Number(SPOOL_NAME.exec(name)?.[1]);
    if (!pid || processExists(pid)) continue;
    await fsp.rm(path.join(dir, name), { recursive: true, force: true });
    removed++;
  }
  return removed;
}

/** The worksheets of one read that wait for the parts stored after them, counted as they are written. */
export class SheetSpool {
  private dir?: Promise<string>;
  private files = 0;
  private bytes = 0;
  private removed = false;
  /** Files being written or read, closed by `remove()`; and the writes, which settle once their file is closed. */
  private readonly open = new Set<fs.WriteStream | fs.ReadStream>();
  private readonly writes = new Set<Promise<void>>();

  constructor(
    private readonly name: string,
    private readonly limits: SpoolLimits,
  ) {}

  /** Copies `entry` to a file of the spool; its path. TooLarge once the spool passes its limit. */
  async write(entry: Readable): Promise<string> {
    // exceljs may go on parsing what it was given after the read has ended: nothing is spooled after `remove()`.
    if (this.removed) throw new Error(`the spool of ${this.name} was removed`);
    this.dir ??= fsp.mkdtemp(path.join(this.limits.dir, `${SPOOL_PREFIX}${process.pid}-`));
    const dir = await this.dir;
    if (this.removed) throw new Error(`the spool of ${this.name} was removed`);
    const file = path.join(dir, `sheet-${++this.files}.xml`);
    const out = fs.createWriteStream(file, { flags: 'wx', mode: 0o600 });
    const counted = new Transform({
      transform: (chunk: Buffer, _encoding, done) => {
        this.bytes += chunk.length;
        done(this.bytes > this.limits.maxBytes ? this.tooLarge() : null, chunk);
      },
    });
    this.open.add(out);
    const written = pipeline(entry, counted, out);
    this.writes.add(written);
    try {
      await written;
    } finally {
      this.open.delete(out);
      this.writes.delete(written);
    }
    return file;
  }

  /** A spooled file's bytes. */
  read(file: string): Readable {
    const input = fs.createReadStream(file);
    this.open.add(input);
    input.once('close', () => this.open.delete(input));
    return input;
  }

  /** Closes every file of the spool and deletes its directory; whatever was writing to it fails. */
  async remove(): Promise<void> {
    this.removed = true;
    for (const file of this.open) file.destroy();
    await Promise.allSettled(this.writes);
    const dir = await this.dir?.catch(() => undefined);
    if (dir) await fsp.rm(dir, { recursive: true, force: true });
  }

  private tooLarge(): ExtractionError {
    return new ExtractionError(
      'TooLarge',
      `${this.name}'s worksheets stored before its shared strings inflate to more than ${this.limits.maxBytes} bytes` +
        " (they wait on the worker's disk until the shared strings are read)",
    );
  }
}

const WORKSHEET = /^xl\/worksheets\/sheet(\d+)\.xml$/;
const HYPERLINKS = /^xl\/worksheets\/_rels\/sheet(\d+)\.xml\.rels$/;

export class SpoolingWorkbookReader extends excelStream.xlsx.WorkbookReader {
  constructor(
    input: Readable,
    options: ConstructorParameters<typeof excelStream.xlsx.WorkbookReader>[1],
    private readonly spool: SheetSpool,
  ) {
    super(input, options);
  }

  /** exceljs 4.4.0's `parse`, the entries in the zip's order, with the spool above. */
  override async *parse(): AsyncGenerator<ReaderEvent> {
    const reader = this as unknown as ReaderInternals;
    const zip = unzipper.Parse({ forceStream: true });
    reader.input.pipe(zip);
    const waiting: Array<{ sheetNo: string; file: string }> = [];
    for await (const entry of iterateStream(zip as unknown as Readable) as AsyncIterable<ZipEntry>) {
      const sheetNo = WORKSHEET.exec(entry.path)?.[1];
      const linksOf = HYPERLINKS.exec(entry.path)?.[1];
      if (entry.path === 'xl/_rels/workbook.xml.rels') await reader._parseRels(entry);
      else if (entry.path === 'xl/workbook.xml') await reader._parseWorkbook(entry);
      else if (entry.path === 'xl/sharedStrings.xml') yield* reader._parseSharedStrings(entry);
      else if (entry.path === 'xl/styles.xml') await reader._parseStyles(entry);
      else if (sheetNo && reader.sharedStrings && reader.workbookRels) {
        yield* reader._parseWorksheet(iterateStream(entry), sheetNo);
      } else if (sheetNo) waiting.push({ sheetNo, file: await this.spool.write(entry) });
      else if (linksOf) yield* reader._parseHyperlinks(iterateStream(entry), linksOf);
      entry.autodrain();
    }
    for (const { sheetNo, file } of waiting) yield* reader._parseWorksheet(this.spool.read(file), sheetNo);
  }
}
