/**
 * A local wiki provider for tests, speaking Confluence Cloud's REST API v1 (node:http) under `/wiki/rest/api`:
 * - `GET /content?type=page[&spaceKey]&start&limit&expand` and `GET /content/{id}/child/page?start&limit&expand`:
 *   `{results, start, limit, size, _links: {base, context, self, next?}}`, `limit` capped by the server
 *   (`maxLimit`), `_links.next` relative to `_links.base` as Confluence sends it.
 * - `GET /content/{id}?expand=body.storage,version,space`: the page, its storage-format HTML only when expanded.
 * - Basic auth (`email:api_token`) on every request: anything else answers 401
 *   `{statusCode: 401, message}`. A restricted page is invisible (absent from listings, 404 when asked for), as
 *   in Confluence. `rateLimit(n, seconds)`: the next n requests answer 429 with Retry-After.
 *
 *   const wiki = await startWikiProvider();
 *   const root = wiki.addPage({ title: 'Home', space: 'ENG', body: '<p>Hello</p>' });
 *   wiki.addPage({ title: 'Child', space: 'ENG', parent: root, body: '<h1>Hi</h1>' });
 *   wikiSource({ wiki_email: wiki.email, wiki_api_token: wiki.token, domain: 'example.atlassian.net' },
 *              { settings: wiki.settings() });
 */
import http from 'node:http';
import type net from 'node:net';
import type { WikiSettings } from '../../src/services/data-connectors/sources/wiki';

export interface DoublePage {
  id: string;
  title: string;
  space: string;
  parent?: string;
  body: string;
  version: number;
  restricted?: boolean;
}

export async function startWikiProvider(opts: { maxLimit?: number } = {}) {
  const email = 'reader@example.com';
  const token = 'ATATT3xFfGF0-test-token';
  const pages = new Map<string, DoublePage>();
  const requests: Array<{ path: string; query: Record<string, string> }> = [];
  let limited = { count: 0, retryAfter: 1 };
  let nextId = 98_305;
  let base = '';

  const json = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json;charset=UTF-8', ...headers });
    res.end(JSON.stringify(body));
  };
  const notFound = (res: http.ServerResponse, id: string) =>
    json(res, 404, {
      statusCode: 404,
      data: { authorized: false, valid: true, errors: [], successful: false },
      message: `com.atlassian.confluence.api.service.exceptions.NotFoundException: No content found with id: ContentId{id=${id}}`,
    });

  const view = (p: DoublePage, expand: string[]) => ({
    id: p.id,
    type: 'page',
    status: 'current',
    title: p.title,
    ...(expand.includes('space') ? { space: { key: p.space, name: p.space, type: 'global' } } : {}),
    ...(expand.includes('version') ? { version: { number: p.version, when: '2026-01-01T00:00:00.000Z' } } : {}),
    ...(expand.includes('body.storage') ? { body: { storage: { value: p.body, representation: 'storage' } } } : {}),
    _links: { webui: `/spaces/${p.space}/pages/${p.id}`, self: `${base}/wiki/rest/api/content/${p.id}` },
  });

  const listing = (res: http.ServerResponse, url: URL, all: DoublePage[]) => {
    const q = url.searchParams;
    const start = Number(q.get('start') ?? 0);
    const limit = Math.min(Number(q.get('limit') ?? 25), opts.maxLimit ?? 100);
    const expand = (q.get('expand') ?? '').split(',');
    const results = all.slice(start, start + limit).map((p) => view(p, expand));
    const path = url.pathname.slice('/wiki'.length);
    const link = (s: number) => {
      const next = new URLSearchParams(q);
      next.set('limit', String(limit));
      next.set('start', String(s));
      return `${path}?${next}`;
    };
    json(res, 200, {
      results,
      start,
      limit,
      size: results.length,
      _links: {
        base: `${base}/wiki`,
        context: '/wiki',
        self: `${base}/wiki${path}`,
        ...(start + limit < all.length ? { next: link(start + limit) } : {}),
      },
    });
  };

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://wiki.local');
    requests.push({ path: url.pathname, query: Object.fromEntries(url.searchParams) });
    const expected = `Basic ${Buffer.from(`${email}:${token}`).toString('base64')}`;
    if (req.headers.authorization !== expected) {
      return json(res, 401, { statusCode: 401, message: 'Client must be authenticated to access this resource.' });
    }
    if (limited.count > 0) {
      limited.count--;
      return json(
        res,
        429,
        { statusCode: 429, message: 'Rate limit exceeded' },
        { 'retry-after': String(limited.retryAfter) },
      );
    }
    const visible = [...pages.values()].filter((p) => !p.restricted);
    const rest = url.pathname.startsWith('/wiki/rest/api/content')
      ? url.pathname.slice('/wiki/rest/api/content'.length)
      : undefined;
    if (req.method !== 'GET' || rest === undefined) return json(res, 404, { statusCode: 404, message: 'Not Found' });
    if (rest === '' || rest === '/') {
      const space = url.searchParams.get('spaceKey');
      return listing(
        res,
        url,
        visible.filter((p) => url.searchParams.get('type') === 'page' && (!space || p.space === space)),
      );
    }
    const child = /^\/(\d+)\/child\/page$/.exec(rest);
    if (child) {
      if (!visible.some((p) => p.id === child[1])) return notFound(res, child[1]);
      return listing(
        res,
        url,
        visible.filter((p) => p.parent === child[1]),
      );
    }
    const one = /^\/(\d+)$/.exec(rest);
    const page = one ? visible.find((p) => p.id === one[1]) : undefined;
    if (!page) return notFound(res, one?.[1] ?? rest);
    json(res, 200, view(page, (url.searchParams.get('expand') ?? '').split(',')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;

  return {
    baseUrl: base,
    email,
    token,
    pages,
    requests,
    settings: (): WikiSettings => ({ baseUrl: base, domainSuffixes: ['atlassian.net'] }),
    addPage: (p: Omit<DoublePage, 'id' | 'version'> & { version?: number }): string => {
      const id = String(nextId++);
      pages.set(id, { ...p, id, version: p.version ?? 1 });
      return id;
    },
    editPage: (id: string, body: string) => {
      const p = pages.get(id)!;
      p.body = body;
      p.version++;
    },
    rateLimit: (count: number, retryAfter: number) => (limited = { count, retryAfter }),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export type WikiProvider = Awaited<ReturnType<typeof startWikiProvider>>;
