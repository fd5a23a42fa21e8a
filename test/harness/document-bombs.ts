// Hostile zipped documents built in memory, a few MB however much they inflate to (issue 41): a part is a
// head, a body repeated `times` times and a tail, each compressed once as raw deflate blocks ended by a full
// flush (they refer to nothing before them, so the repeated block can be written again and again), and each
// entry's headers may declare any size: honest ones, 32-bit ones of 2 GiB and more, zip64 ones past 4 GiB,
// or lying ones. The CRC is 0: yauzl does not check it. Also the honest shapes that cost a parser most: XML of
// the shortest paragraphs, slides and chapters listed thousands of times, elements nested deep; entities; a PDF
// whose one content stream inflates to gigabytes.
import zlib from 'node:zlib';

export interface BombPart {
  name: string;
  head?: string;
  /** Repeated `times` times between head and tail. */
  body?: string;
  times?: number;
  tail?: string;
  /** The size the headers declare; default the true size. Past 0xfffffffe it is written as zip64. */
  declared?: number;
}

const flushed = (text: string) => zlib.deflateRawSync(Buffer.from(text), { finishFlush: zlib.constants.Z_FULL_FLUSH });

/** The raw deflate stream of a part and the bytes it truly inflates to. */
function deflatePart(p: BombPart): { data: Buffer; size: number } {
  const times = p.times ?? 1;
  const body = p.body ? flushed(p.body) : Buffer.alloc(0);
  const pieces = [flushed(p.head ?? ''), ...Array.from({ length: p.body ? times : 0 }, () => body)];
  pieces.push(zlib.deflateRawSync(Buffer.from(p.tail ?? '')));
  const size =
    Buffer.byteLength(p.head ?? '') + Buffer.byteLength(p.body ?? '') * times + Buffer.byteLength(p.tail ?? '');
  return { data: Buffer.concat(pieces), size };
}

/** A zip of `parts`, every one deflated, with the declared sizes each asks for. */
export function zipOf(parts: BombPart[]): Buffer {
  const out: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const p of parts) {
    const { data, size } = deflatePart(p);
    const declared = p.declared ?? size;
    const zip64 = declared >= 0xffffffff;
    const name = Buffer.from(p.name);
    const extra = Buffer.alloc(zip64 ? 20 : 0);
    if (zip64) {
      extra.writeUInt16LE(0x0001, 0);
      extra.writeUInt16LE(16, 2);
      extra.writeBigUInt64LE(BigInt(declared), 4);
      extra.writeBigUInt64LE(BigInt(data.length), 12);
    }
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(zip64 ? 45 : 20, 4);
    local.writeUInt16LE(8, 8); // deflate
    local.writeUInt32LE(zip64 ? 0xffffffff : data.length, 18);
    local.writeUInt32LE(zip64 ? 0xffffffff : declared, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(extra.length, 28);
    const at = offset;
    for (const b of [local, name, extra, data]) {
      out.push(b);
      offset += b.length;
    }
    const entry = Buffer.alloc(46);
    entry.writeUInt32LE(0x02014b50, 0);
    entry.writeUInt16LE(0x0314, 4);
    entry.writeUInt16LE(zip64 ? 45 : 20, 6);
    entry.writeUInt16LE(8, 10);
    entry.writeUInt32LE(zip64 ? 0xffffffff : data.length, 20);
    entry.writeUInt32LE(zip64 ? 0xffffffff : declared, 24);
    entry.writeUInt16LE(name.length, 28);
    entry.writeUInt16LE(extra.length, 30);
    entry.writeUInt32LE(at, 42);
    central.push(entry, name, extra);
  }
  const directory = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(parts.length, 8);
  end.writeUInt16LE(parts.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...out, directory, end]);
}

const W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"';
const RELS = `<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">`;
const DOCX_RELS = `${RELS}<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`;

/** A docx whose body is `paragraph` (WordprocessingML) repeated `times` times; `declared` its headers' size. */
export function docxBomb(times: number, opts: { paragraph?: string; declared?: number } = {}): Buffer {
  return zipOf([
    { name: '_rels/.rels', head: DOCX_RELS },
    {
      name: 'word/document.xml',
      head: `<?xml version="1.0" encoding="UTF-8"?><w:document ${W}><w:body>`,
      body: opts.paragraph ?? '<w:p><w:r><w:t>ab</w:t></w:r></w:p>'.repeat(1024),
      times,
      tail: '</w:body></w:document>',
      declared: opts.declared,
    },
  ]);
}

/** A docx whose paragraph sits `depth` elements deep. */
export function deepDocx(depth: number): Buffer {
  return zipOf([
    { name: '_rels/.rels', head: DOCX_RELS },
    {
      name: 'word/document.xml',
      head: `<?xml version="1.0"?><w:document ${W}><w:body>${'<w:sdt>'.repeat(depth)}<w:p><w:r><w:t>deep</w:t></w:r></w:p>${'</w:sdt>'.repeat(depth)}</w:body></w:document>`,
    },
  ]);
}

/** A pptx whose one slide (`slideText` repeated `repeat` times) is listed `listings` times. */
export function pptxAmplified(listings: number, slideText: string, repeat: number): Buffer {
  const P = 'xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"';
  const A = 'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"';
  const R = 'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"';
  return zipOf([
    {
      name: 'ppt/_rels/presentation.xml.rels',
      head: `${RELS}<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/slide" Target="slides/slide1.xml"/></Relationships>`,
    },
    {
      name: 'ppt/presentation.xml',
      head: `<?xml version="1.0"?><p:presentation ${P} ${R}><p:sldIdLst>`,
      body: '<p:sldId id="256" r:id="rId1"/>',
      times: listings,
      tail: '</p:sldIdLst></p:presentation>',
    },
    {
      name: 'ppt/slides/slide1.xml',
      head: `<?xml version="1.0"?><p:sld ${P} ${A}><p:cSld><p:spTree><p:sp><p:txBody>`,
      body: `<a:p><a:r><a:t>${slideText}</a:t></a:r></a:p>`,
      times: repeat,
      tail: '</p:txBody></p:sp></p:spTree></p:cSld></p:sld>',
    },
  ]);
}

/** An EPUB whose one chapter (`chapterText` repeated `repeat` times) is in the spine `listings` times. */
export function epubAmplified(listings: number, chapterText: string, repeat: number): Buffer {
  return zipOf([
    {
      name: 'META-INF/container.xml',
      head: `<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>`,
    },
    {
      name: 'OEBPS/content.opf',
      head: `<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0"><manifest><item id="c" href="c.xhtml" media-type="application/xhtml+xml"/></manifest><spine>`,
      body: '<itemref idref="c"/>',
      times: listings,
      tail: '</spine></package>',
    },
    {
      name: 'OEBPS/c.xhtml',
      head: '<html xmlns="http://www.w3.org/1999/xhtml"><body>',
      body: `<p>${chapterText}</p>`,
      times: repeat,
      tail: '</body></html>',
    },
  ]);
}

/** A docx that declares an external entity for a host file and a billion laughs, and uses both. */
export function entityDocx(): Buffer {
  const dtd =
    '<!DOCTYPE w:document [<!ENTITY xxe SYSTEM "file:///etc/hostname"><!ENTITY a "aaaaaaaaaa">' +
    '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>';
  return zipOf([
    { name: '_rels/.rels', head: DOCX_RELS },
    {
      name: 'word/document.xml',
      head: `<?xml version="1.0"?>${dtd}<w:document ${W}><w:body><w:p><w:r><w:t>&xxe;&c;</w:t></w:r></w:p></w:body></w:document>`,
    },
  ]);
}

/** A one-page PDF whose content stream (FlateDecode) inflates to about `bytes` of text operators. */
export function pdfStreamBomb(bytes: number): Buffer {
  const segment = zlib.deflateRawSync(Buffer.from('(a) Tj '.repeat(Math.floor((64 * 1024 * 1024) / 7))), {
    finishFlush: zlib.constants.Z_FULL_FLUSH,
  });
  const body = Buffer.concat([
    Buffer.from([0x78, 0x9c]), // a zlib header; pdf.js checks no Adler-32
    flushed('BT /F1 12 Tf '),
    ...Array.from({ length: Math.max(1, Math.round(bytes / (64 * 1024 * 1024))) }, () => segment),
    zlib.deflateRawSync(Buffer.from(' ET')),
    Buffer.alloc(4),
  ]);
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    undefined,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  const parts = [Buffer.from('%PDF-1.4\n')];
  let offset = parts[0].length;
  const offsets: number[] = [];
  objects.forEach((o, i) => {
    offsets.push(offset);
    const part =
      o === undefined
        ? Buffer.concat([
            Buffer.from(`${i + 1} 0 obj\n<< /Length ${body.length} /Filter /FlateDecode >>\nstream\n`),
            body,
            Buffer.from('\nendstream\nendobj\n'),
          ])
        : Buffer.from(`${i + 1} 0 obj\n${o}\nendobj\n`);
    parts.push(part);
    offset += part.length;
  });
  const xref =
    `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n` +
    offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('') +
    `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${offset}\n%%EOF\n`;
  return Buffer.concat([...parts, Buffer.from(xref)]);
}
