// The structure of an extracted text, for chunks that follow the document (chunking.ts, chunkDocument):
// its sections, each with the path of headings above it, and each section's blocks (paragraphs, list items,
// fenced code blocks, tables), which a chunk never cuts while they fit.
//
// Two readings:
// - `markdown` (.md, and HTML, which htmlToText writes with `#` headings, `- ` items and `| ` rows): ATX
//   headings (`## Title`), ``` fences, tables, list items, paragraphs between blank lines;
// - `text` (everything else, such as rendered manual pages): a heading is a short line at the left margin
//   whose section below is indented (`DESCRIPTION`, `OPTIONS` of a man page), or a line underlined with `===`
//   or `---`; paragraphs between blank lines. A line taken for a heading wrongly only starts a section early.

export type TextFormat = 'markdown' | 'text';

export interface Section {
  /** Headings from the outermost down to this section's own (empty before the first heading). */
  path: string[];
  /** Its blocks, in order, each trimmed and non-empty. */
  blocks: string[];
}

/** How an asset's extracted text is read: by the extension of its name. */
export function formatOf(assetName: string): TextFormat {
  return /\.(md|markdown|mdx|html?|xhtml|epub|xlsx)$/i.test(assetName) ? 'markdown' : 'text';
}

/** Longest line read as a heading (characters). */
const MAX_HEADING = 80;

const ATX = /^(#{1,6})[ \t]+(.+?)[ \t#]*$/;
const FENCE = /^\s*(```|~~~)/;
const LIST_ITEM = /^\s{0,3}([-*+•]|\d{1,3}[.)])\s+\S/;
const TABLE_ROW = /^\s*\|/;

function plainHeading(lines: string[], i: number): boolean {
  const line = lines[i];
  if (!line || /^\s/.test(line) || line.length > MAX_HEADING || /[.,;:!?]$/.test(line)) return false;
  if (!/^[\p{L}\p{N}]/u.test(line)) return false;
  const next = lines[i + 1] ?? '';
  if (/^(=+|-+)\s*$/.test(next) && next.trim().length >= Math.min(3, line.length)) return true;
  // A margin heading: the section below it is indented (the next non-blank line starts with whitespace).
  for (let j = i + 1; j < lines.length; j++) if (lines[j].trim()) return /^\s/.test(lines[j]);
  return false;
}

/** The sections of `text` (line breaks already `\n`). */
export function sectionsOf(text: string, format: TextFormat): Section[] {
  const lines = text.split('\n');
  const sections: Section[] = [];
  let path: string[] = [];
  let levels: number[] = [];
  let blocks: string[] = [];
  let block: string[] = [];
  const endBlock = () => {
    const joined = block.join('\n').trim();
    if (joined) blocks.push(joined);
    block = [];
  };
  const startSection = (level: number, title: string) => {
    endBlock();
    if (blocks.length) sections.push({ path, blocks });
    blocks = [];
    const keep = levels.findIndex((l) => l >= level);
    const depth = keep === -1 ? levels.length : keep;
    path = [...path.slice(0, depth), title];
    levels = [...levels.slice(0, depth), level];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (format === 'markdown') {
      const atx = ATX.exec(line);
      if (atx) {
        startSection(atx[1].length, atx[2].trim());
        continue;
      }
      if (FENCE.test(line)) {
        endBlock();
        const fence = FENCE.exec(line)![1];
        block.push(line);
        while (++i < lines.length) {
          block.push(lines[i]);
          if (lines[i].trim().startsWith(fence)) break;
        }
        endBlock();
        continue;
      }
      if (TABLE_ROW.test(line)) {
        if (!TABLE_ROW.test(lines[i - 1] ?? '')) endBlock();
        block.push(line);
        if (!TABLE_ROW.test(lines[i + 1] ?? '')) endBlock();
        continue;
      }
      if (LIST_ITEM.test(line)) endBlock();
    } else if (plainHeading(lines, i)) {
      startSection(1, line.trim());
      if (/^(=+|-+)\s*$/.test(lines[i + 1] ?? '')) i++;
      continue;
    }
    if (!line.trim()) endBlock();
    else block.push(line);
  }
  endBlock();
  if (blocks.length) sections.push({ path, blocks });
  return sections;
}
