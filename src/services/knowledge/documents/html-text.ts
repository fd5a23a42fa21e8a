// HTML to readable text (pages, EPUB chapters): see htmlToText. The structure stays, written as Markdown,
// so that chunks can follow it (sections.ts): headings as `## Title`, list items as `- item`, table rows as
// `| a | b |`, and a blank line between blocks.
const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };
const PARAGRAPH = /<\/?(p|div|hr|ul|ol|dl|table|section|article|header|footer|blockquote|pre|figure)\b[^>]*>/gi;
const LINE = /<\/?(br|dt|dd)\b[^>]*>/gi;
/** Stands for a line break of a <pre> while the others, which HTML reads as spaces, are taken out. */
const PRE_BREAK = '\u0001';

/** A careful minimal HTML-to-text (no library is a dependency): good for readable pages, not a parser. */
export function htmlToText(html: string): string {
  return html
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<(script|style|noscript|template)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/\u0001/g, ' ')
    .replace(/<pre\b[^>]*>[\s\S]*?<\/pre\s*>/gi, (pre) => pre.replace(/\r?\n/g, PRE_BREAK))
    .replace(/[\r\n]+/g, ' ')
    .replace(/<h([1-6])\b[^>]*>/gi, (_, level: string) => `\n\n${'#'.repeat(Number(level))} `)
    .replace(/<\/h[1-6]\s*>/gi, '\n\n')
    .replace(/<li\b[^>]*>/gi, '\n- ')
    .replace(/<tr\b[^>]*>/gi, '\n|')
    .replace(/<\/(li|tr)\s*>/gi, '')
    .replace(/<\/t[dh]\s*>/gi, ' |')
    .replace(PARAGRAPH, '\n\n')
    .replace(LINE, '\n')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, code: string) => {
      if (code[0] === '#') {
        const n = code[1] === 'x' || code[1] === 'X' ? parseInt(code.slice(2), 16) : parseInt(code.slice(1), 10);
        return n > 0 && n <= 0x10ffff && !(n >= 0xd800 && n <= 0xdfff) ? String.fromCodePoint(n) : ' ';
      }
      return ENTITIES[code.toLowerCase()] ?? whole;
    })
    .replace(/[ \t\r\f\v]+/g, ' ')
    .replace(/\u0001/g, '\n')
    .replace(/ *\n */g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
