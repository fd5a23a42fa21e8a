// Splitting text into chunks for embedding and full-text search, measured in tokens of OpenAI's cl100k_base
// encoding (js-tiktoken; the encoding of text-embedding-3-* and ada-002, and close enough for other models):
// windows of at most CHUNK_TOKENS tokens that overlap by at most CHUNK_OVERLAP_TOKENS, cut at the strongest
// boundary (paragraph break, line break, sentence end, space) in the second half of the window, never inside a
// word unless the word is very long. The text is cut into words with their leading whitespace first; their
// token counts add up to (almost exactly) the count of their concatenation, and every chunk is counted once
// more exactly before it is kept, so "at most CHUNK_TOKENS" holds. A word of more than LONG_WORD characters
// (a hash, base64, a language written without spaces) is cut into pieces of at most LONG_WORD code points,
// counted piece by piece: byte-pair encoding is quadratic in the length of a word (js-tiktoken takes seconds
// for 2,000 repeated letters), so such a word is never encoded whole, and a chunk holding pieces is not
// counted again (its count is the sum of its pieces').
//
// chunkDocument cuts along the document's structure first (sections.ts): a chunk never crosses a section's
// heading and never cuts a paragraph, list item, code block or table row while they fit; only a block longer
// than a chunk is cut by length as above. Each chunk's text starts with the document's title and the path of
// headings of its section (`sort › DESCRIPTION`), so the full-text index and the embedding both see them.
import { createHash } from 'node:crypto';
import { Tiktoken } from 'js-tiktoken/lite';
import cl100k from 'js-tiktoken/ranks/cl100k_base';
import { sectionsOf, type TextFormat } from './sections';

export const TOKENIZER = 'cl100k_base';
/** About 1,000 characters of English prose; well inside every embedding model's input limit. */
export const CHUNK_TOKENS = 256;
/** About a fifth of a chunk, so a sentence cut by a boundary is whole in one of the two chunks. */
export const CHUNK_OVERLAP_TOKENS = 50;

export interface Chunk {
  index: number;
  content: string;
  /** Tokens of `content` (cl100k_base). */
  tokens: number;
  /** sha256 of the content: a chunk with the same text keeps its embedding on a re-run. */
  hash: string;
  /** chunkDocument: the ordinal of its section in the document (the chunks of one section are consecutive). */
  section?: number;
}

let encoder: Tiktoken | undefined;

/** Tokens of `text`; special-token strings (`<|endoftext|>`) in the text count as plain text. */
export function countTokens(text: string): number {
  encoder ??= new Tiktoken(cl100k);
  return encoder.encode(text, [], []).length;
}

/** Longest word counted whole (characters); longer words are cut. */
const LONG_WORD = 64;
const LONG_WORD_RE = new RegExp(`\\S{${LONG_WORD + 1}}`);

interface Unit {
  text: string;
  tokens: number;
  /** A piece of a cut word. */
  piece?: true;
}

/** Words counted between two turns of the caller (chunkSteps yields). */
const WORDS_PER_STEP = 2_000;

/** Words with their leading whitespace; a word longer than LONG_WORD characters is cut into pieces. */
function* unitsOf(text: string, size: number, counted = new Map<string, number>()): Generator<void, Unit[]> {
  const count = (t: string) => {
    let n = counted.get(t);
    if (n === undefined) counted.set(t, (n = countTokens(t)));
    return n;
  };
  // A code point is at most 4 UTF-8 bytes, hence at most 4 tokens: pieces of size/4 code points always fit.
  const step = Math.max(1, Math.min(LONG_WORD, Math.floor(size / 4)));
  const units: Unit[] = [];
  let words = 0;
  for (const word of text.match(/\s*\S+/g) ?? []) {
    if (++words % WORDS_PER_STEP === 0) yield;
    const tokens = word.length <= LONG_WORD ? count(word) : Infinity;
    if (tokens <= size) {
      units.push({ text: word, tokens });
      continue;
    }
    const points = Array.from(word);
    for (let i = 0; i < points.length; i += step) {
      const piece = points.slice(i, i + step).join('');
      units.push({ text: piece, tokens: count(piece), piece: true });
    }
  }
  return units;
}

/** How good a cut after `units[i]` is: 3 paragraph break, 2 line break, 1 sentence end, 0 space. */
function strengthAfter(units: Unit[], i: number): number {
  const next = units[i + 1]?.text ?? '\n\n';
  if (/^\s*\n\s*\n/.test(next)) return 3;
  if (next.startsWith('\n') || /^\s*\n/.test(next)) return 2;
  return /[.!?;:]["')\]]?$/.test(units[i].text) ? 1 : 0;
}

/** The chunks of `text`, computed all at once (short texts, tests). */
export function chunkText(text: string, size = CHUNK_TOKENS, overlap = CHUNK_OVERLAP_TOKENS): Chunk[] {
  const steps = chunkSteps(text, size, overlap);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** How long chunkTextInSlices works before it gives the event loop a turn. */
const SLICE_MS = 20;

/**
 * The same chunks as chunkText, computed in slices of about SLICE_MS with a turn of the event loop between
 * them: a text near the 10 M-character cap takes tens of seconds of CPU, which would otherwise hold the
 * worker's heartbeats and every other activity of the process for all of that time.
 */
export function chunkTextInSlices(
  text: string,
  /** Stops the chunking between two slices (the job's cancel or time limit). */
  signal?: AbortSignal,
  size = CHUNK_TOKENS,
  overlap = CHUNK_OVERLAP_TOKENS,
): Promise<Chunk[]> {
  return inSlices(chunkSteps(text, size, overlap), signal);
}

async function inSlices(steps: Generator<void, Chunk[]>, signal?: AbortSignal): Promise<Chunk[]> {
  let sliceStart = performance.now();
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    if (performance.now() - sliceStart >= SLICE_MS) {
      await new Promise((resolve) => setImmediate(resolve));
      signal?.throwIfAborted();
      sliceStart = performance.now();
    }
  }
}

const normalized = (text: string) =>
  text
    .replace(/\r\n?/g, '\n')
    .replace(/[ \t]+/g, ' ')
    .replace(/\n{3,}/g, '\n\n')
    .trim();

/** The chunking itself, yielding now and then (between words counted, after each chunk) to its driver. */
function* chunkSteps(text: string, size: number, overlap: number): Generator<void, Chunk[]> {
  return numbered(yield* pieceSteps(normalized(text), size, overlap));
}

type Piece = { content: string; tokens: number; section?: number };

const numbered = (pieces: Piece[]): Chunk[] =>
  pieces.map(({ content, tokens, section }, index) => ({
    index,
    content,
    tokens,
    hash: createHash('sha256').update(content, 'utf8').digest('hex'),
    ...(section !== undefined ? { section } : {}),
  }));

/** Pieces of at most `size` tokens of `clean` (normalized) text, cut by length at the strongest boundaries. */
function* pieceSteps(
  clean: string,
  size: number,
  overlap: number,
  counted?: Map<string, number>,
): Generator<void, Array<{ content: string; tokens: number }>> {
  const units = yield* unitsOf(clean, size, counted);
  const pieces: Array<{ content: string; tokens: number }> = [];
  let start = 0;
  while (start < units.length) {
    let end = start;
    let total = 0;
    while (end < units.length && total + units[end].tokens <= size) total += units[end++].tokens;
    if (end < units.length) {
      // The strongest boundary in the window's second half (the latest of equals).
      let best = end;
      let strength = -1;
      let kept = total;
      for (let i = end; i > start && kept >= size / 2; kept -= units[--i].tokens) {
        const s = strengthAfter(units, i - 1);
        if (s > strength) [best, strength] = [i, s];
      }
      end = best;
    }
    // Counted exactly: drop trailing words in the rare case the sum of the words' counts was short.
    let content = '';
    let tokens = 0;
    for (;;) {
      const window = units.slice(start, end);
      content = window
        .map((u) => u.text)
        .join('')
        .trim();
      if (window.some((u) => u.piece)) {
        tokens = window.reduce((n, u) => n + u.tokens, 0);
        break;
      }
      tokens = countTokens(content);
      if (tokens <= size || end - start <= 1) break;
      end--;
    }
    if (content) pieces.push({ content, tokens });
    if (end >= units.length) break;
    yield;
    // The next window starts up to `overlap` tokens back, at a word start, always past this one's start.
    let next = end;
    let back = 0;
    while (next - 1 > start && back + units[next - 1].tokens <= overlap) back += units[--next].tokens;
    start = next;
  }
  return pieces;
}

export interface DocumentInfo {
  /** The document's title (its own, or the asset's file name): the first part of every chunk's heading line. */
  title: string;
  format: TextFormat;
}

/** Tokens of a chunk's heading line at most: a longer path keeps its last headings. */
const MAX_HEADING_TOKENS = 48;
/** A section smaller than this joins the next ones in one chunk (a man page's NAME with its SYNOPSIS). */
const MIN_SECTION_TOKENS = 48;

/** The chunks of a document along its structure (see the header), computed in slices like chunkTextInSlices. */
export function chunkDocument(
  text: string,
  info: DocumentInfo,
  signal?: AbortSignal,
  size = CHUNK_TOKENS,
  overlap = CHUNK_OVERLAP_TOKENS,
): Promise<Chunk[]> {
  return inSlices(documentSteps(text, info, size, overlap), signal);
}

function headingLine(parts: string[]): string {
  const clean = parts.map((p) => p.replace(/\s+/g, ' ').trim()).filter(Boolean);
  while (clean.length > 1 && countTokens(clean.join(' › ')) > MAX_HEADING_TOKENS) clean.splice(1, 1);
  const line = clean.join(' › ');
  return countTokens(line) > MAX_HEADING_TOKENS ? line.slice(0, MAX_HEADING_TOKENS * 2) : line;
}

function* documentSteps(text: string, info: DocumentInfo, size: number, overlap: number): Generator<void, Chunk[]> {
  const sections = sectionsOf(text.replace(/\r\n?/g, '\n'), info.format);
  const chunks: Piece[] = [];
  const count = new BlockCounter(size);
  let i = 0;
  let ordinal = 0;
  while (i < sections.length) {
    // Small sections join the following ones, under the heading of the first, each keeping its own heading.
    const first = sections[i];
    const blocks = first.blocks.map(normalized).filter(Boolean);
    let measured = yield* count.blocks(blocks);
    while (i + 1 < sections.length && measured < MIN_SECTION_TOKENS) {
      const next = sections[++i];
      const own = [next.path.at(-1) ?? '', ...next.blocks].map(normalized).filter(Boolean);
      blocks.push(...own);
      measured += yield* count.blocks(own);
    }
    i++;
    const heading = headingLine([info.title, ...first.path]);
    const headingTokens = countTokens(heading) + 1;
    const budget = Math.max(size / 2, size - headingTokens);
    const section: Piece[] = [];
    yield* packSection(heading, blocks, { size, budget, overlap, count }, section);
    chunks.push(...section.map((piece) => ({ ...piece, section: ordinal })));
    if (section.length) ordinal++;
  }
  return numbered(chunks);
}

/** Tokens of blocks, counted word by word with one memo of word counts for the whole document, each block once. */
class BlockCounter {
  readonly words = new Map<string, number>();
  private readonly counted = new Map<string, number>();
  constructor(private readonly size: number) {}

  /** The count of a block counted before (0 when it was not). */
  cached(block: string): number {
    return this.counted.get(block) ?? 0;
  }

  *blocks(blocks: string[]): Generator<void, number> {
    let total = 0;
    for (const block of blocks) {
      let tokens = this.counted.get(block);
      if (tokens === undefined) {
        tokens = (yield* unitsOf(block, this.size, this.words)).reduce((n, u) => n + u.tokens, 0);
        this.counted.set(block, tokens);
      }
      total += tokens;
    }
    return total;
  }
}

/**
 * Blocks packed into chunks of at most `budget` tokens after the heading line (counted word by word); a longer
 * block cut by length. A chunk counted exactly over `size` gives its last block to a chunk of its own.
 */
function* packSection(
  heading: string,
  blocks: string[],
  { size, budget, overlap, count }: { size: number; budget: number; overlap: number; count: BlockCounter },
  out: Array<{ content: string; tokens: number }>,
): Generator<void, void> {
  const headingTokens = countTokens(heading) + 2;
  const emitBlocks = (group: string[]) => {
    const content = `${heading}\n\n${group.join('\n\n')}`;
    // A word past LONG_WORD is never encoded whole (quadratic): such a chunk counts as its blocks' sum.
    const tokens = group.some((b) => LONG_WORD_RE.test(b))
      ? headingTokens + group.reduce((n, b) => n + count.cached(b) + 2, 0)
      : countTokens(content);
    if (tokens <= size || group.length === 1) out.push({ content, tokens });
    else {
      emitBlocks(group.slice(0, -1));
      emitBlocks(group.slice(-1));
    }
  };
  // A piece cut by length was counted by pieceSteps (a piece of a long word, piece by piece).
  const emit = (piece: { content: string; tokens: number }) =>
    out.push({ content: `${heading}\n\n${piece.content}`, tokens: headingTokens + piece.tokens });
  let current: string[] = [];
  let used = 0;
  for (const block of blocks) {
    const tokens = yield* count.blocks([block]);
    if (tokens > budget) {
      if (current.length) emitBlocks(current);
      [current, used] = [[], 0];
      for (const piece of yield* pieceSteps(block, budget, overlap, count.words)) emit(piece);
      continue;
    }
    if (used + tokens + 1 > budget && current.length) {
      emitBlocks(current);
      [current, used] = [[], 0];
    }
    current.push(block);
    used += tokens + 1;
  }
  if (current.length) emitBlocks(current);
}
