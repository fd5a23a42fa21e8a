// Archive bombs built on the fly, a few MB on disk however much they inflate to: a deflate segment of zeros
// compressed once (full flush: it refers to nothing before it) and repeated. tar.gz: concatenated gzip
// members (valid gzip); zip: one raw deflate stream of repeated segments. Written to a file in pieces.
import fs from 'node:fs';
import zlib from 'node:zlib';

const SEGMENT_BYTES = 64 * 1024 ** 2;
const gzipMembers = new Map<number, Buffer>();
let deflateSegment: Buffer | undefined;

/** One gzip member inflating to `bytes` zeros (~1/1000 of it), made once per size. */
function zerosGzipMember(bytes = SEGMENT_BYTES): Buffer {
  let member = gzipMembers.get(bytes);
  if (!member) gzipMembers.set(bytes, (member = zlib.gzipSync(Buffer.alloc(bytes), { level: 9 })));
  return member;
}

/** Raw deflate blocks (not final) inflating to SEGMENT_BYTES of zeros, repeatable back to back. */
function zerosDeflateBlocks(): Buffer {
  deflateSegment ??= zlib.deflateRawSync(Buffer.alloc(SEGMENT_BYTES), {
    level: 9,
    finishFlush: zlib.constants.Z_FULL_FLUSH,
  });
  return deflateSegment;
}

function tarHeader(name: string, size: number): Buffer {
  const h = Buffer.alloc(512);
  h.write(name, 0, 100, 'utf8');
  h.write('0000644\0', 100);
  h.write('0000000\0', 108);
  h.write('0000000\0', 116);
  h.write(`${size.toString(8).padStart(11, '0')}\0`, 124);
  h.write('00000000000\0', 136);
  h.write('        ', 148); // checksum placeholder: spaces
  h.write('0', 156);
  h.write('ustar\0', 257);
  h.write('00', 263);
  let sum = 0;
  for (const byte of h) sum += byte;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
  return h;
}

/**
 * A tar.gz of `files` entries of `fileBytes` zeros each (fileBytes a multiple of 64 MiB, or under it and a
 * multiple of 512). Answers the bytes it inflates to.
 */
export function writeTarGzBomb(out: string, files: number, fileBytes: number): number {
  const fd = fs.openSync(out, 'w');
  try {
    for (let i = 0; i < files; i++) {
      fs.writeSync(fd, zlib.gzipSync(tarHeader(`zeros-${i}.bin`, fileBytes)));
      if (fileBytes >= SEGMENT_BYTES) {
        for (let done = 0; done < fileBytes; done += SEGMENT_BYTES) fs.writeSync(fd, zerosGzipMember());
      } else {
        fs.writeSync(fd, zerosGzipMember(fileBytes));
      }
    }
    fs.writeSync(fd, zlib.gzipSync(Buffer.alloc(1024))); // the end-of-archive blocks
  } finally {
    fs.closeSync(fd);
  }
  return files * (512 + fileBytes) + 1024;
}

/**
 * A zip of `entries` entries each inflating to `actualBytes` zeros (a multiple of 64 MiB) while declaring
 * `declaredBytes` in its headers (a lying size when they differ). The CRC is 0: yauzl does not check it.
 */
export function writeZipBomb(out: string, entries: number, actualBytes: number, declaredBytes = actualBytes): void {
  const fd = fs.openSync(out, 'w');
  const central: Buffer[] = [];
  let offset = 0;
  const write = (b: Buffer) => {
    fs.writeSync(fd, b);
    offset += b.length;
  };
  const finalBlock = zlib.deflateRawSync(Buffer.alloc(0));
  const compressedBytes = (actualBytes / SEGMENT_BYTES) * zerosDeflateBlocks().length + finalBlock.length;
  try {
    for (let i = 0; i < entries; i++) {
      const name = Buffer.from(`zeros-${i}.bin`);
      const local = Buffer.alloc(30);
      local.writeUInt32LE(0x04034b50, 0);
      local.writeUInt16LE(20, 4);
      local.writeUInt16LE(8, 8); // deflate
      local.writeUInt32LE(compressedBytes, 18);
      local.writeUInt32LE(declaredBytes, 22);
      local.writeUInt16LE(name.length, 26);
      const at = offset;
      write(Buffer.concat([local, name]));
      for (let done = 0; done < actualBytes; done += SEGMENT_BYTES) write(zerosDeflateBlocks());
      write(finalBlock);
      const entry = Buffer.alloc(46);
      entry.writeUInt32LE(0x02014b50, 0);
      entry.writeUInt16LE(0x0314, 4); // made by unix
      entry.writeUInt16LE(20, 6);
      entry.writeUInt16LE(8, 10);
      entry.writeUInt32LE(compressedBytes, 20);
      entry.writeUInt32LE(declaredBytes, 24);
      entry.writeUInt16LE(name.length, 28);
      entry.writeUInt32LE((0o100644 << 16) >>> 0, 38);
      entry.writeUInt32LE(at, 42);
      central.push(entry, name);
    }
    const directory = Buffer.concat(central);
    const end = Buffer.alloc(22);
    end.writeUInt32LE(0x06054b50, 0);
    end.writeUInt16LE(entries, 8);
    end.writeUInt16LE(entries, 10);
    end.writeUInt32LE(directory.length, 12);
    end.writeUInt32LE(offset, 16);
    write(directory);
    write(end);
  } finally {
    fs.closeSync(fd);
  }
}

/** The peak RSS of this process since the last reset (VmHWM), in bytes. */
export function peakRss(): number {
  const m = /^VmHWM:\s+(\d+) kB/m.exec(fs.readFileSync('/proc/self/status', 'latin1'));
  return m ? Number(m[1]) * 1024 : process.memoryUsage().rss;
}

/** Resets this process's peak RSS to its current RSS (Linux: clear_refs 5); false where that is refused. */
export function resetPeakRss(): boolean {
  try {
    fs.writeFileSync('/proc/self/clear_refs', '5');
    return true;
  } catch {
    return false;
  }
}
