// HTML to clean text: Mozilla's Readability (Firefox Reader View) picks the main content of the page (no
// navigation, footers, ads), parsed with linkedom; block elements become line breaks. A page Readability
// finds no article in falls back to the whole body without scripts, styles and navigation. Also the links of
// a page (for the same-site crawl).
import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';

const BLOCKS = new Set(
  'ADDRESS ARTICLE ASIDE BLOCKQUOTE BR DD DIV DL DT FIGCAPTION FIGURE FOOTER FORM H1 H2 H3 H4 H5 H6 HEADER HR LI MAIN NAV OL P PRE SECTION TABLE TR UL'.split(
    ' ',
  ),
);

interface DomNode {
  nodeType: number;
  nodeName: string;
  textContent: string | null;
  childNodes: ArrayLike<DomNode>;
}
interface DomElement extends DomNode {
  getAttribute(name: string): string | null;
  remove(): void;
}
/** The little of linkedom's document used here (its own types need the DOM lib, which this project leaves out). */
interface Doc extends DomNode {
  body: DomNode | null;
  querySelector(selector: string): DomElement | null;
  querySelectorAll(selector: string): ArrayLike<DomElement>;
}
const parse = (html: string): Doc => (parseHTML(html) as unknown as { document: Doc }).document;

function textOf(root: DomNode): string {
  const out: string[] = [];
  const walk = (n: DomNode) => {
    if (n.nodeType === 3) {
      out.push((n.textContent ?? '').replace(/\s+/g, ' '));
      return;
    }
    if (n.nodeType !== 1 && n.nodeType !== 9 && n.nodeType !== 11) return;
    const block = BLOCKS.has(n.nodeName.toUpperCase());
    if (block) out.push('\n');
    for (const c of Array.from(n.childNodes)) walk(c);
    if (block) out.push('\n');
  };
  walk(root);
  return out
    .join('')
    .split('\n')
    .map((l) => l.trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

export function htmlToText(html: string): { title?: string; text: string } {
  const document = parse(html);
  const pageTitle = document.querySelector('title')?.textContent?.trim() || undefined;
  let article: { title?: string | null; content?: string | null } | null = null;
  try {
    article = new Readability(document as unknown as ConstructorParameters<typeof Readability>[0]).parse();
  } catch {
    article = null;
  }
  if (article?.content) {
    const main = parse(`<html><body>${article.content}</body></html>`);
    const text = textOf(main.body ?? main);
    if (text) return { title: article.title?.trim() || pageTitle, text };
  }
  const whole = parse(html);
  for (const el of Array.from(whole.querySelectorAll('script, style, noscript, nav, template'))) el.remove();
  return { title: pageTitle, text: textOf(whole.body ?? whole) };
}

/** The http(s) links of a page, absolute, without fragments. */
export function linksOf(html: string, base: string): string[] {
  const document = parse(html);
  const out = new Set<string>();
  for (const a of Array.from(document.querySelectorAll('a[href]'))) {
    try {
      const u = new URL(a.getAttribute('href') ?? '', base);
      u.hash = '';
      if (u.protocol === 'http:' || u.protocol === 'https:') out.add(u.href);
    } catch {
      /* not a URL */
    }
  }
  return [...out];
}
