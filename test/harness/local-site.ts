// A small website on OUTSIDE_HOST (a loopback address the stack allows) for webscraper tests: pages by path (changeable while it runs), a robots.txt,
// a page that never answers, and a record of every request (path and User-Agent).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { OUTSIDE_HOST } from './stack';

export interface LocalSite {
  url: string;
  /** Path → [content type, body]; absent paths answer 404. */
  pages: Map<string, [string, string]>;
  requests: Array<{ path: string; userAgent: string }>;
  /** Paths that never answer (the client's timeout or cancel ends them). */
  hanging: Set<string>;
  /** Paths of hanging requests whose client went away (closed the connection). */
  abandoned: string[];
  close(): Promise<void>;
}

export async function startLocalSite(pages: Record<string, [string, string]> = {}): Promise<LocalSite> {
  const site: Omit<LocalSite, 'url' | 'close'> = {
    pages: new Map(Object.entries(pages)),
    requests: [],
    hanging: new Set(),
    abandoned: [],
  };
  const open = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    site.requests.push({ path, userAgent: String(req.headers['user-agent'] ?? '') });
    if (site.hanging.has(path)) {
      open.add(res);
      res.on('close', () => {
        if (open.delete(res)) site.abandoned.push(path);
      });
      return;
    }
    const page = site.pages.get(path);
    if (!page) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    if (page[0] === 'redirect') {
      res.writeHead(302, { location: page[1] }).end();
      return;
    }
    res.writeHead(200, { 'content-type': page[0] }).end(page[1]);
  });
  await new Promise<void>((r) => server.listen(0, OUTSIDE_HOST, r));
  const { port } = server.address() as AddressInfo;
  return {
    ...site,
    url: `http://${OUTSIDE_HOST}:${port}`,
    close: () =>
      new Promise<void>((r) => {
        for (const res of [...open]) {
          open.delete(res);
          res.destroy();
        }
        server.close(() => r());
      }),
  };
}

/** An HTML page with navigation, a main article and links. */
export const htmlPage = (title: string, paragraphs: string[], links: string[] = []) =>
  `<!doctype html><html><head><title>${title}</title></head><body>
<nav><a href="/">Home</a> | <a href="/about">About us menu</a></nav>
<article><h1>${title}</h1>${paragraphs.map((p) => `<p>${p}</p>`).join('\n')}
<ul>${links.map((l) => `<li><a href="${l}">${l}</a></li>`).join('')}</ul></article>
<footer>Copyright footer text</footer><script>var tracking = 1;</script></body></html>`;
