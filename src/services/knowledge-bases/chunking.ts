// Splitting text into chunks for embedding and full-text search: windows of at most CHUNK_SIZE characters
// that overlap by about CHUNK_OVERLAP characters, cut at the last paragraph break, line break, sentence end
// or space in the second half of the window when there is one (never inside a word when avoidable).
// Characters, not tokens: no tokenizer per model is needed, and 1,000 characters (about 250 English tokens)
// fit every embedding model's input.
import { createHash } from 'node:crypto';

export const CHUNK_SIZE = 1000;
export const CHUNK_OVERLAP = 200;

export interface Chunk {
  index: number;
  content: string;
  /** sha256 of the content: a chunk with the same text keeps its embedding on a re-run. */
  hash: string;
}

export function chunkText(text: string, size = CHUNK_SIZE, overlap = CHUNK_OVERLAP): Chunk[] {
  const clean = text
    .replace(/\r\n?/g, '\n')
    .replace(/[ \t]+/g, ' ')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  const pieces: string[] = [];
  let start = 0;
  while (start < clean.length) {
    let end = Math.min(start + size, clean.length);
    if (end < clean.length) {
      const window = clean.slice(start, end);
      const min = Math.floor(size / 2);
      for (const sep of ['\n\n', '\n', '. ', ' ']) {
        const at = window.lastIndexOf(sep);
        if (at >= min) {
          end = start + at + sep.length;
          break;
        }
      }
    }
    const piece = clean.slice(start, end).trim();
    if (piece) pieces.push(piece);
    if (end >= clean.length) break;
    // The next window starts `overlap` characters back, at a word start.
    let next = Math.max(end - overlap, start + 1);
    const space = clean.indexOf(' ', next);
    if (space >= 0 && space < end) next = space + 1;
    start = next;
  }
  return pieces.map((content, index) => ({
    index,
    content,
    hash: createHash('sha256').update(content, 'utf8').digest('hex'),
  }));
}
