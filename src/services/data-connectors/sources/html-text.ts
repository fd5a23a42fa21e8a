// HTML to clean text: Mozilla's Readability (Firefox Reader View) picks the main content of the page (no
// navigation, footers, ads), parsed with linkedom; block elements become line breaks. A page Readability
// finds no article in falls back to the whole body without scripts, styles and navigation. Also the links of
// a page (for the same-site crawl), from the same parse.
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

type Article = { title?: string | null; content?: DomNode | null };

/** A page's main text, its title and its http(s) links (absolute, without fragments). */
export interface PageText {
  title?: string;
  text: string;
  links: string[];
}

/** A page's text, title and links, from one parse of it. */
export function readPage(html: string, base: string): PageText {
  const document = parse(html);
  const pageTitle = document.querySelector('title')?.textContent?.trim() || undefined;
  // Before Readability, which prunes the document it reads.
  const links = linksIn(document, base);
  let article: Article | null = null;
  try {
    // The serializer hands back the article's element: its text is read here, not serialized and parsed again.
    const reader = new Readability(document as unknown as ConstructorParameters<typeof Readability>[0], {
      serializer: (el) => el,
    });
    article = reader.parse() as Article | null;
  } catch {
    article = null;
  }
  if (article?.content) {
    const text = textOf(article.content);
    if (text) return { title: article.title?.trim() || pageTitle, text, links };
  }
  // No article: the whole page, from a fresh parse (Readability has pruned the first one).
  const whole = parse(html);
  for (const el of Array.from(whole.querySelectorAll('script, style, noscript, nav, template'))) el.remove();
  return { title: pageTitle, text: textOf(whole.body ?? whole), links };
}

function linksIn(document: Doc, base: string): string[] {
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
