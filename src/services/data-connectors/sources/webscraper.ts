// The `webscraper` source: fetches each of `urls` (and, with `max_depth` > 0, the same-site pages they link
// to, breadth first, at most `max_pages`) through the SSRF-safe fetch, honouring robots.txt for our User-Agent
// (a missing robots.txt allows everything; one that cannot be read for a server error or a network failure
// disallows the site, RFC 9309), DATA_CONNECTOR_FETCH_CONCURRENCY pages at a time. HTML becomes its main
// text (html-text.ts, on an extraction thread: page-reader.ts); other text and binary types are kept as they
// are. The page is read while listing (links are only known then), so its version is the hash of what would
// be stored: unchanged pages are not rewritten. Item paths are `<host>/<path>` of the final URL (`.txt` added
// to converted HTML); errors name the URL asked for.
import { createHash } from 'node:crypto';
import robotsParser from 'robots-parser';
import type { SourceFactory } from './source';
import { outboundPolicyFor } from '../../../security/outbound-policy';
import { FetchError, safeFetch, type FetchOptions } from './safe-fetch';
import { readPageOffThread } from './page-reader';
import { mapConcurrently } from '../concurrently';
import type { SourceContent, SourceItem, SourceItemError } from './source';

export const DEFAULT_MAX_PAGES = 100;
const ROBOTS_MAX_BYTES = 512 * 1024;
/** Pages read ahead of the job's writes, per fetch slot. */
const READ_AHEAD = 2;

type Robots = { isAllowed(url: string, ua?: string): boolean | undefined } | 'disallow';

/** `example.com/docs/a.html` from a URL: the item's path (query strings hashed in, so they stay distinct). */
export function pathOfUrl(href: string): string {
  const u = new URL(href);
  const segments = u.pathname
    .split('/')
    .map((s) => {
      try {
        return decodeURIComponent(s);
      } catch {
        return s;
      }
    })
    .map((s) => s.replace(/[\\\u0000-\u001f\u007f]/g, '_'))
    .filter((s) => s !== '' && s !== '.' && s !== '..');
  let last = segments.pop() ?? 'index';
  if (u.search) last += `-${createHash('sha256').update(u.search).digest('hex').slice(0, 12)}`;
  const host = u.port ? `${u.hostname}_${u.port}` : u.hostname;
  return [host.replace(/[[\]:]/g, '_'), ...segments, last].join('/');
}

export const webscraperSource: SourceFactory = (config, deps) => {
  const settings = deps.config.dataConnectors;
  const policy = outboundPolicyFor(deps.config);
  const urls = (config.urls as string[]) ?? [];
  const maxDepth = Math.max(0, Math.min(5, Number(config.max_depth ?? 0) || 0));
  const maxPages = Math.max(1, Math.min(1000, Number(config.max_pages ?? DEFAULT_MAX_PAGES) || DEFAULT_MAX_PAGES));
  const pages = new Map<string, SourceContent>();
  const robots = new Map<string, Promise<Robots>>();

  const robotsOf = (origin: string, opts: FetchOptions): Promise<Robots> => {
    let r = robots.get(origin);
    if (!r) {
      const robotsUrl = `${origin}/robots.txt`;
      r = safeFetch(robotsUrl, { ...opts, maxBytes: ROBOTS_MAX_BYTES }).then(
        (page) => {
          if (page.status >= 500) return 'disallow' as const;
          if (page.status >= 400) return robotsParser(robotsUrl, '');
          return robotsParser(robotsUrl, page.status === 200 ? page.body.toString('utf8') : '');
        },
        (err) => {
          // Aborted, or an address we refuse: the page itself fails the same way.
          if (opts.signal.aborted || (err instanceof FetchError && err.type === 'AddressRefused')) throw err;
          return err instanceof FetchError && err.type === 'TooLarge'
            ? robotsParser(robotsUrl, '')
            : ('disallow' as const);
        },
      );
      robots.set(origin, r);
    }
    return r;
  };

  /** One page: fetched, checked, converted; its same-site links for the next level. */
  const visit = async (
    href: string,
    opts: FetchOptions,
  ): Promise<{ item: SourceItem | SourceItemError; links: string[] }> => {
    const fail = (type: string, message: string) => ({
      item: { error: true as const, type, message, path: href },
      links: [],
    });
    try {
      const origin = new URL(href).origin;
      const rules = await robotsOf(origin, opts);
      if (rules === 'disallow')
        return fail(
          'RobotsDisallowed',
          `${origin}/robots.txt could not be read (server error or unreachable): the site is not fetched`,
        );
      if (rules.isAllowed(href, settings.userAgent) === false)
        return fail('RobotsDisallowed', `${href} is disallowed by ${origin}/robots.txt for ${settings.userAgent}`);
      const page = await safeFetch(href, opts);
      if (page.status === 404 || page.status === 410) return fail('NotFound', `${href} answered ${page.status}`);
      if (page.status === 401 || page.status === 403) return fail('Forbidden', `${href} answered ${page.status}`);
      if (page.status < 200 || page.status >= 300) return fail('FetchFailed', `${href} answered ${page.status}`);
      const type = String(page.headers['content-type'] ?? 'application/octet-stream');
      let content: SourceContent;
      let links: string[] = [];
      // Converted pages are text: `.txt`, so a knowledge base reads them as text, not as HTML again.
      let path = pathOfUrl(page.url);
      if (/^(text\/html|application\/xhtml\+xml)/i.test(type)) {
        const {
          title,
          text,
          links: all,
        } = await readPageOffThread(page.body.toString('utf8'), page.url, settings.extractThreads);
        content = {
          body: Buffer.from(text, 'utf8'),
          contentType: 'text/plain; charset=utf-8',
          ...(title ? { title } : {}),
        };
        links = all.filter((l) => new URL(l).origin === new URL(page.url).origin);
        path += '.txt';
      } else {
        content = { body: page.body, contentType: type };
      }
      pages.set(path, content);
      return {
        item: {
          path,
          sourceUri: page.url,
          ...(content.title ? { title: content.title } : {}),
          version: `sha256:${createHash('sha256').update(content.body).digest('hex')}`,
          meta: { requested_url: href },
        },
        links,
      };
    } catch (err) {
      if (opts.signal.aborted) throw err;
      if (err instanceof FetchError) return fail(err.type, err.message);
      return fail('FetchFailed', `${href}: ${(err as Error).message}`);
    }
  };

  return {
    async *list(ctx) {
      const opts: FetchOptions = { config: settings, policy, signal: ctx.signal, maxBytes: ctx.maxItemBytes };
      const seen = new Set<string>();
      let level = urls.map((u) => {
        const x = new URL(u);
        x.hash = '';
        return x.href;
      });
      let fetched = 0;
      for (let depth = 0; depth <= maxDepth && level.length; depth++) {
        const next: string[] = [];
        const todo = level.filter((u) => !seen.has(u)).slice(0, maxPages - fetched);
        todo.forEach((u) => seen.add(u));
        fetched += todo.length;
        // DATA_CONNECTOR_FETCH_CONCURRENCY pages at a time, yielded as they arrive, in no fixed order. The pool
        // refills as each page ends, not when the job takes the next one, so fetching and extraction go on
        // while the job writes; at most READ_AHEAD pages per fetch slot wait, read, to be taken.
        const { fetchConcurrency } = settings;
        const visits = mapConcurrently(
          todo,
          fetchConcurrency,
          (href) => visit(href, opts),
          fetchConcurrency * READ_AHEAD,
        );
        for await (const r of visits) {
          ctx.progress('error' in r.item ? r.item.path : r.item.sourceUri);
          yield r.item;
          if (depth < maxDepth) next.push(...r.links);
        }
        level = next;
      }
    },
    async read(item) {
      const page = pages.get(item.path);
      if (!page) throw Object.assign(new Error(`${item.sourceUri} was not fetched`), { type: 'FetchFailed' });
      pages.delete(item.path);
      return page;
    },
  };
};
