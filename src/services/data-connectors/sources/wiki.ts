// The `wiki` source: pages of a wiki provider speaking Confluence Cloud's REST API (`/wiki/rest/api`, basic auth
// with the account's email and an API token). Every page the account can see, or (documented extra config) the
// pages of `space_keys`, or the pages of `page_ids` and all their descendants. Listings follow `_links.next`
// (`start`/`limit` pagination); a page is read with `expand=body.storage` and its storage-format HTML turned into
// text (html-to-text). Version = the page's version number. A refused token fails the whole listing.
import { convert } from 'html-to-text';
import type { ConnectorSource, SourceContent, SourceContext, SourceItem, SourceItemError } from './source';
import { itemError, safeSegment, SourceError, SourceUnavailableError, toItemError, tooLarge } from './source-error';
import { OutboundRefused, type OutboundPolicy } from '../../../security/outbound-policy';
import { DEFAULT_RETRY, fetchWithRetry, rateLimited, readCapped, readJson, type RetryPolicy } from './http';

export interface WikiConfig {
  wiki_email: string;
  wiki_api_token: string;
  /** The site's host name, e.g. `example.atlassian.net` (a leading `https://` and a trailing `/` are accepted). */
  domain: string;
  page_ids?: string[];
  space_keys?: string[];
}

export interface WikiSettings {
  /** Replaces `https://<domain>` for every connector (a proxy, tests). */
  baseUrl: string | undefined;
  /** Allowed domain suffixes; empty: any host name. */
  domainSuffixes: string[];
}

export interface WikiDeps {
  settings: WikiSettings;
  retry?: RetryPolicy;
  /** Results per listing request (the provider may answer fewer). */
  pageSize?: number;
  /**
   * The outbound address policy, for a wiki at the tenant's domain (no WIKI_BASE_URL): its addresses are checked
   * before the first request, and its answers may not redirect elsewhere.
   */
  policy?: OutboundPolicy;
}

export class WikiAuthError extends SourceUnavailableError {
  constructor(message: string) {
    super('Unauthorized', message);
  }
}

const HOST = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;
const PAGE_ID = /^\d{1,30}$/;
const SPACE_KEY = /^~?[A-Za-z0-9_-]{1,255}$/;
/** Descendants are followed this deep below a listed page. */
const MAX_DEPTH = 30;

/** The normalized domain of `raw`, or an error message naming what is accepted. */
export function wikiDomain(raw: string, settings: WikiSettings): { domain: string } | { error: string } {
  const domain = raw
    .trim()
    .toLowerCase()
    .replace(/^https:\/\//, '')
    .replace(/\/+$/, '');
  if (!HOST.test(domain))
    return { error: `domain must be the wiki's host name (example.atlassian.net), got ${JSON.stringify(raw)}` };
  const allowed = settings.domainSuffixes;
  if (allowed.length && !allowed.some((s) => domain === s || domain.endsWith(`.${s}`))) {
    return {
      error: `domain must end with ${allowed.map((s) => `.${s}`).join(' or ')} (WIKI_DOMAIN_SUFFIXES), got ${domain}`,
    };
  }
  return { domain };
}

interface Page {
  id: string;
  type?: string;
  title?: string;
  space?: { key?: string };
  version?: { number?: number; when?: string };
  body?: { storage?: { value?: string } };
  _links?: { webui?: string };
}
interface Listing {
  results?: Page[];
  _links?: { next?: string };
}

/** Storage format to text: CDATA (code macros) kept as text, links without their URLs, images left out. */
export function storageToText(html: string): string {
  const escaped = html.replace(/<!\[CDATA\[([\s\S]*?)\]\]>/g, (_, t: string) =>
    t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;'),
  );
  return convert(escaped, {
    wordwrap: false,
    selectors: [
      { selector: 'a', options: { ignoreHref: true } },
      { selector: 'img', format: 'skip' },
      { selector: 'h1', options: { uppercase: false } },
      { selector: 'h2', options: { uppercase: false } },
      { selector: 'h3', options: { uppercase: false } },
      { selector: 'table', format: 'dataTable', options: { uppercaseHeaderCells: false } },
    ],
  }).trim();
}

export function wikiSource(config: WikiConfig, deps: WikiDeps): ConnectorSource {
  const retry = deps.retry ?? DEFAULT_RETRY;
  const limit = String(deps.pageSize ?? 50);
  const auth = `Basic ${Buffer.from(`${config.wiki_email}:${config.wiki_api_token}`).toString('base64')}`;
  const checked = wikiDomain(config.domain, deps.settings);
  const domain = 'domain' in checked ? checked.domain : config.domain;
  const wikiRoot = `${deps.settings.baseUrl ?? `https://${domain}`}/wiki`;
  const api = `${wikiRoot}/rest/api`;

  const tenantHost = deps.settings.baseUrl === undefined;
  let hostChecked: Promise<unknown> | undefined;

  async function get(url: string, ctx: SourceContext, what: string): Promise<Response> {
    if (tenantHost && deps.policy) {
      hostChecked ??= deps.policy.resolve(domain, 443);
      await hostChecked.catch((err: unknown) => {
        throw err instanceof OutboundRefused ? new SourceUnavailableError(err.type, err.message) : err;
      });
    }
    let res: Response;
    try {
      res = await fetchWithRetry(
        url,
        () => ({
          headers: { authorization: auth, accept: 'application/json' },
          ...(tenantHost ? { redirect: 'error' as const } : {}),
        }),
        ctx.signal,
        retry,
        (s) => ctx.progress(`${what}: rate limited, waiting ${s} s`),
      );
    } catch (err) {
      if ((err as Error).name === 'AbortError') throw err;
      throw new SourceUnavailableError(
        'Unreachable',
        `the wiki at ${domain} did not answer: ${(err as Error).message}`,
      );
    }
    if (res.status === 401) {
      await res.body?.cancel();
      throw new WikiAuthError(
        `the wiki at ${domain} refused wiki_email and wiki_api_token (HTTP 401): check the email and create a new API token`,
      );
    }
    return res;
  }

  async function failure(res: Response, uri: string): Promise<SourceError> {
    if (res.status === 429 || res.status === 503) return rateLimited(res, uri);
    const body = await readJson<{ message?: string }>(res, uri).catch(() => ({}) as { message?: string });
    const message = `${uri}: ${body.message ?? `HTTP ${res.status}`}`;
    if (res.status === 404) return new SourceError('NotFound', message);
    if (res.status === 403) return new SourceError('Forbidden', message);
    return new SourceError('FetchFailed', `${message} (HTTP ${res.status})`);
  }

  const uriOf = (id: string) => `wiki://${domain}/${id}`;
  const toItem = (p: Page): SourceItem => ({
    path: `${safeSegment(p.space?.key ?? 'pages', 'pages')}/${p.id}/${safeSegment(p.title ?? p.id, p.id)}.txt`,
    sourceUri: uriOf(p.id),
    title: p.title,
    ...(p.version?.number !== undefined ? { version: String(p.version.number) } : {}),
    meta: {
      wiki_page_id: p.id,
      ...(p.space?.key ? { space_key: p.space.key } : {}),
      ...(p._links?.webui ? { url: `${wikiRoot}${p._links.webui}` } : {}),
    },
  });

  /** Every page of a listing, following `_links.next` (only within this wiki's REST API). */
  async function* pages(first: string, ctx: SourceContext, what: string): AsyncGenerator<Page | SourceItemError> {
    let url: string | undefined = first;
    while (url) {
      const res = await get(url, ctx, what);
      if (!res.ok) {
        yield toItemError(what, await failure(res, what));
        return;
      }
      const listing = await readJson<Listing>(res, what);
      for (const p of listing.results ?? []) if (p.type === undefined || p.type === 'page') yield p;
      const next = listing._links?.next;
      url = next && next.startsWith('/rest/api/') ? `${wikiRoot}${next}` : undefined;
      ctx.progress(`listing ${what}`);
    }
  }

  async function* descendants(
    id: string,
    depth: number,
    ctx: SourceContext,
    seen: Set<string>,
  ): AsyncGenerator<SourceItem | SourceItemError> {
    if (depth > MAX_DEPTH) {
      yield itemError(uriOf(id), 'TooDeep', `${uriOf(id)}: pages deeper than ${MAX_DEPTH} are not followed`);
      return;
    }
    const q = new URLSearchParams({ limit, start: '0', expand: 'version,space' });
    for await (const p of pages(`${api}/content/${id}/child/page?${q}`, ctx, `children of ${uriOf(id)}`)) {
      if ('error' in p) yield p;
      else if (!seen.has(p.id)) {
        seen.add(p.id);
        yield toItem(p);
        yield* descendants(p.id, depth + 1, ctx, seen);
      }
    }
  }

  return {
    async *list(ctx) {
      if ('error' in checked) throw new SourceError('InvalidConfig', checked.error);
      const seen = new Set<string>();
      const emit = (p: Page) => (seen.has(p.id) ? [] : (seen.add(p.id), [toItem(p)]));
      if (config.page_ids?.length) {
        for (const id of config.page_ids) {
          if (!PAGE_ID.test(id)) {
            yield itemError(id, 'InvalidPageId', `${JSON.stringify(id)} is not a wiki page id`);
            continue;
          }
          const res = await get(
            `${api}/content/${id}?${new URLSearchParams({ expand: 'version,space' })}`,
            ctx,
            uriOf(id),
          );
          if (!res.ok) {
            yield toItemError(uriOf(id), await failure(res, uriOf(id)));
            continue;
          }
          yield* emit(await readJson<Page>(res, uriOf(id)));
          yield* descendants(id, 1, ctx, seen);
        }
        return;
      }
      const spaces = config.space_keys?.length ? config.space_keys : [undefined];
      for (const space of spaces) {
        if (space !== undefined && !SPACE_KEY.test(space)) {
          yield itemError(space, 'InvalidSpaceKey', `${JSON.stringify(space)} is not a wiki space key`);
          continue;
        }
        const q = new URLSearchParams({
          type: 'page',
          limit,
          start: '0',
          expand: 'version,space',
          ...(space ? { spaceKey: space } : {}),
        });
        const what = space ? `space ${space}` : `pages of ${domain}`;
        for await (const p of pages(`${api}/content?${q}`, ctx, what)) {
          if ('error' in p) yield p;
          else yield* emit(p);
        }
      }
    },

    async read(item, ctx): Promise<SourceContent> {
      const id = item.meta?.wiki_page_id ?? '';
      if (!PAGE_ID.test(id)) throw new SourceError('InvalidPageId', `${item.sourceUri} names no wiki page`);
      const res = await get(
        `${api}/content/${id}?${new URLSearchParams({ expand: 'body.storage,version' })}`,
        ctx,
        item.sourceUri,
      );
      if (!res.ok) throw await failure(res, item.sourceUri);
      // The answer is JSON around the HTML: allow some room for it, then cap the text itself.
      const raw = await readCapped(res, ctx.maxItemBytes + 64 * 1024, item.sourceUri).catch((err: unknown) => {
        throw err instanceof SourceError && err.type === 'TooLarge' ? tooLarge(item.sourceUri, ctx.maxItemBytes) : err;
      });
      let page: Page;
      try {
        page = JSON.parse(raw.toString('utf8')) as Page;
      } catch {
        throw new SourceError('FetchFailed', `${item.sourceUri}: the wiki answered a body that is not JSON`);
      }
      const title = page.title ?? item.title;
      const text = storageToText(page.body?.storage?.value ?? '');
      const body = Buffer.from(title ? `${title}\n\n${text}\n` : `${text}\n`, 'utf8');
      if (body.length > ctx.maxItemBytes) throw tooLarge(item.sourceUri, ctx.maxItemBytes);
      return {
        body,
        contentType: 'text/plain; charset=utf-8',
        title,
        ...(page.version?.number !== undefined ? { version: String(page.version.number) } : {}),
      };
    },
  };
}
