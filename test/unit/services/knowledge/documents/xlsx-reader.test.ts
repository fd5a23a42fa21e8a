// The bounded spool of the streaming spreadsheet reader (src/services/knowledge/documents/xlsx-reader.ts), through
// extractXlsx: workbooks made with exceljs's streaming writer store their worksheets before the shared strings
// and the workbook part, so the reader spools them. A workbook is read as before; one whose spooled XML passes
// the limit (a small limit, and the default with a compressed workbook of a few hundred KB) is TooLarge; and on
// every ending (read, TooLarge, cancelled, cut short) the spool's directory is gone and no file of it is open.
import '../../../../../src/services/knowledge/documents/exceljs-iterate-stream'; // before exceljs loads (this test writes with it)
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import ExcelJS from 'exceljs';
import JSZip from 'jszip';
import { expect } from 'chai';
import { until } from '../../../../drills/kit';
import { writeCompressedXlsx } from '../../../../fixtures/office';
import { rejectionOf as rejection } from '../../../../support/sources';
import {
  ExtractionError,
  MAX_SPOOLED_XML_BYTES,
} from '../../../../../src/services/knowledge/documents/extraction-error';
import { extractXlsx } from '../../../../../src/services/knowledge/documents/xlsx';
import { removeSpoolsOfGoneWorkers } from '../../../../../src/services/knowledge/documents/xlsx-reader';

/** Files of `dir` (at any depth) and the files this process holds open under it. */
function leftIn(dir: string): { files: string[]; open: string[] } {
  const files = fs.readdirSync(dir, { recursive: true }).map(String);
  const open = fs
    .readdirSync('/proc/self/fd')
    .map((fd) => {
      try {
        return fs.readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        return '';
      }
    })
    .filter((target) => target.startsWith(dir));
  return { files, open };
}

describe('spreadsheet reader: the spool of worksheets stored before the shared strings', function () {
  this.timeout(120_000);
  let work: string;
  let spool: string;
  let fauna: Buffer;

  before(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'xlsx-reader-test-'));
    const file = path.join(work, 'fauna.xlsx');
    const book = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: file, useSharedStrings: true, useStyles: false });
    const animals = book.addWorksheet('Animals');
    for (const row of [
      ['animal', 'island'],
      ['Quokka', 'Rottnest'],
      ['Kakapo', 'Codfish'],
    ]) {
      animals.addRow(row).commit();
    }
    animals.commit();
    const counts = book.addWorksheet('Counts');
    counts.addRow(['Quokka', 12000]).commit();
    counts.commit();
    await book.commit();
    fauna = fs.readFileSync(file);
  });
  beforeEach(() => (spool = fs.mkdtempSync(path.join(work, 'spool-'))));
  afterEach(() => expect(leftIn(spool)).to.deep.equal({ files: [], open: [] }));
  after(() => fs.rmSync(work, { recursive: true, force: true }));

  const FAUNA_TEXT = '# Animals\nanimal,island\nQuokka,Rottnest\nKakapo,Codfish\n\n# Counts\nQuokka,12000';

  it('reads the spooled worksheets, then removes them', async () => {
    const zip = await JSZip.loadAsync(fauna);
    const names = Object.keys(zip.files);
    expect(names.indexOf('xl/worksheets/sheet1.xml')).to.be.lessThan(names.indexOf('xl/sharedStrings.xml'));
    const text = await extractXlsx('fauna.xlsx', Readable.from(fauna), undefined, {
      dir: spool,
      maxBytes: MAX_SPOOLED_XML_BYTES,
    });
    expect(text).to.equal(FAUNA_TEXT);
  });

  it("removes, at a worker's start, the spools of workers that are gone, not a live worker's", async () => {
    const gonePid = spawnSync('true').pid!;
    fs.mkdirSync(path.join(spool, `tarmac-xlsx-${gonePid}-a1b2c3`, 'nested'), { recursive: true });
    fs.writeFileSync(path.join(spool, `tarmac-xlsx-${gonePid}-a1b2c3`, 'sheet-1.xml'), '<worksheet/>');
    fs.mkdirSync(path.join(spool, `tarmac-xlsx-${process.pid}-d4e5f6`));
    fs.mkdirSync(path.join(spool, 'another-program'));
    expect(await removeSpoolsOfGoneWorkers(spool)).to.equal(1);
    expect(fs.readdirSync(spool).sort()).to.deep.equal(['another-program', `tarmac-xlsx-${process.pid}-d4e5f6`]);
    for (const name of fs.readdirSync(spool)) fs.rmdirSync(path.join(spool, name));
  });

  it('spools nothing when the shared strings and the workbook come first', async () => {
    const zip = await JSZip.loadAsync(fauna);
    const first = ['xl/sharedStrings.xml', 'xl/workbook.xml', 'xl/_rels/workbook.xml.rels', 'xl/styles.xml'];
    const reordered = new JSZip();
    const order = [...first, ...Object.keys(zip.files).filter((n) => !first.includes(n) && !zip.files[n]!.dir)];
    for (const name of order) reordered.file(name, await zip.file(name)!.async('nodebuffer'));
    const bytes = await reordered.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' });
    // A limit of one byte: any spooled worksheet would fail the read.
    const text = await extractXlsx('fauna.xlsx', Readable.from(bytes), undefined, { dir: spool, maxBytes: 1 });
    expect(text).to.equal(FAUNA_TEXT);
  });

  it('is TooLarge past its limit', async () => {
    const err = await rejection(
      extractXlsx('fauna.xlsx', Readable.from(fauna), undefined, { dir: spool, maxBytes: 100 }),
    );
    expect(err).to.be.instanceOf(ExtractionError);
    expect(err).to.include({
      type: 'TooLarge',
      message:
        "fauna.xlsx's worksheets stored before its shared strings inflate to more than 100 bytes (they wait on the" +
        " worker's disk until the shared strings are read)",
    });
  });

  it('stops a small compressed workbook at the default limit', async () => {
    const file = path.join(work, 'bomb.xlsx');
    await writeCompressedXlsx(file, MAX_SPOOLED_XML_BYTES + 10 * 1024 * 1024);
    const size = fs.statSync(file).size;
    expect(size, 'the compressed workbook (about 40 times smaller than its XML)').to.be.lessThan(
      MAX_SPOOLED_XML_BYTES / 20,
    );
    const err = await rejection(
      extractXlsx('bomb.xlsx', fs.createReadStream(file), undefined, { dir: spool, maxBytes: MAX_SPOOLED_XML_BYTES }),
    );
    expect(err).to.include({ type: 'TooLarge' });
    expect(err.message).to.include(`inflate to more than ${MAX_SPOOLED_XML_BYTES} bytes`);
  });

  describe('a read that stops while a worksheet is spooled', () => {
    let half: Buffer;

    before(async () => {
      const file = path.join(work, 'long.xlsx');
      await writeCompressedXlsx(file, 20 * 1024 * 1024);
      const bytes = fs.readFileSync(file);
      half = bytes.subarray(0, Math.floor(bytes.length / 2));
    });

    /** The read of the first half of a workbook, once part of its worksheet is in the spool. */
    async function spooling(signal?: AbortSignal) {
      const input = new PassThrough();
      const read = extractXlsx('long.xlsx', input, signal, { dir: spool, maxBytes: MAX_SPOOLED_XML_BYTES });
      read.catch(() => undefined);
      input.write(half);
      await until('a spooled file', 20_000, async () => leftIn(spool).files.find((f) => f.endsWith('.xml')), 10);
      return { input, read };
    }

    it('removes the spool when cancelled', async () => {
      const cancel = new AbortController();
      const { read } = await spooling(cancel.signal);
      cancel.abort(new Error('cancelled by the test'));
      expect((await rejection(read)).message).to.equal('cancelled by the test');
    });

    it('spools nothing once cancelled before the worksheet is reached', async () => {
      const cancel = new AbortController();
      const input = new PassThrough();
      const read = extractXlsx('long.xlsx', input, cancel.signal, { dir: spool, maxBytes: MAX_SPOOLED_XML_BYTES });
      input.write(half.subarray(0, 200_000));
      cancel.abort(new Error('cancelled by the test'));
      expect((await rejection(read)).message).to.equal('cancelled by the test');
      // exceljs goes on parsing what it was given, and reaches the worksheet after the read has ended.
      await new Promise((r) => setTimeout(r, 500));
    });

    it('removes the spool when the input is cut short', async () => {
      const { input, read } = await spooling();
      input.end();
      const err = await rejection(read);
      expect(err).to.include({ type: 'InvalidContent' });
      expect(err.message).to.include('long.xlsx is not a readable spreadsheet');
    });
  });
});
