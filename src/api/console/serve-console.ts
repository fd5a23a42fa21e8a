// The web console (console/, docs/console.md): its static build served at /console, same origin as the api,
// under a strict Content-Security-Policy (scripts, styles and requests only from this origin, no framing).
// The page itself holds nothing: every datum comes from /api with the API key the user signs in with.
import fs from 'node:fs';
import path from 'node:path';
import type Koa from 'koa';
import type { Config } from '../../config';
import { temporalUiUrl } from '../../temporal/ui-url';

/** dist/console, where tools/build-console.mjs bundles it (this file runs from dist/src/api/console/). */
export const CONSOLE_BUILD_DIR = path.resolve(__dirname, '../../../console');

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
};

const escapeAttribute = (s: string) =>
  s.replace(/[&"<>]/g, (c) => ({ '&': '&amp;', '"': '&quot;', '<': '&lt;', '>': '&gt;' })[c]!);

/** index.html with what the page cannot learn from the API: where the Temporal UI shows this namespace. */
function indexHtml(dir: string, config: Config): string | undefined {
  let html: string;
  try {
    html = fs.readFileSync(path.join(dir, 'index.html'), 'utf8');
  } catch {
    return undefined;
  }
  const ui = temporalUiUrl(config);
  const meta = ui
    ? `<meta name="tarmac-temporal-ui" content="${escapeAttribute(`${ui.replace(/\/$/, '')}/namespaces/${encodeURIComponent(config.temporal.namespace)}`)}">`
    : '';
  return html.replace('</head>', `${meta}</head>`);
}

/** A regular file under `dir` named by the request path, or undefined (never a path outside `dir`). */
function assetFile(dir: string, relative: string): string | undefined {
  const file = path.resolve(dir, '.' + path.posix.normalize('/' + relative));
  if (!file.startsWith(dir + path.sep)) return undefined;
  try {
    return fs.lstatSync(file).isFile() ? file : undefined;
  } catch {
    return undefined;
  }
}

export function serveConsole(config: Config, dir = CONSOLE_BUILD_DIR): Koa.Middleware {
  let index: string | undefined;
  return async (ctx, next) => {
    if (ctx.path !== '/console' && !ctx.path.startsWith('/console/')) return next();
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    ctx.set('Content-Security-Policy', CONSOLE_CSP);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
    const relative = ctx.path.slice('/console'.length).replace(/^\//, '');
    // Hashed file names (Vite): a file never changes under its name.
    const file = relative.startsWith('assets/') ? assetFile(dir, relative) : undefined;
    if (file) {
      ctx.type = TYPES[path.extname(file)] ?? 'application/octet-stream';
      ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
      ctx.body = fs.createReadStream(file);
      return;
    }
    if (relative.startsWith('assets/')) return next(); // a 404
    // Every other path is a page of the console: its router reads the path.
    index ??= indexHtml(dir, config);
    if (!index) {
      ctx.status = 503;
      ctx.body = {
        type: 'ServiceUnavailableError',
        errors: [{ message: 'The console is not built: run `npm run build` (it builds console/).' }],
      };
      index = undefined;
      return;
    }
    ctx.type = TYPES['.html'];
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = index;
  };
}
