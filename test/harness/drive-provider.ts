/**
 * A local file storage provider for tests, speaking Google Drive's wire protocol (node:http):
 * - OAuth 2.0 token endpoint `POST /token` (form): `grant_type=authorization_code` (client id and secret, a
 *   one-use code, the redirect URI) answers `{access_token, expires_in, refresh_token, scope, token_type}`;
 *   `grant_type=refresh_token` answers a new access token without a refresh token (as Google does). Errors as
 *   `{error, error_description}`: 400 `invalid_grant`, 400 `redirect_uri_mismatch`, 401 `invalid_client`.
 * - Files API v3 with `Authorization: Bearer`: `GET /drive/v3/files/{id}?fields=…` (metadata, only the fields
 *   asked for), `?alt=media` (content; 403 `fileNotDownloadable` for Google's own formats), `GET
 *   /drive/v3/files/{id}/export?mimeType=…` (Google's own formats only, else 403 `fileNotExportable`), `GET
 *   /drive/v3/files?q='{id}' in parents and trashed = false&pageSize&pageToken` (folder listings, paginated with
 *   `nextPageToken`). Errors in Google's shape `{error: {code, message, errors: [{reason}], status}}`: 401
 *   `authError` for an unknown or expired token, 404 `notFound`, 403 `insufficientFilePermissions`, 429
 *   `rateLimitExceeded` with Retry-After.
 *
 *   const drive = await startDriveProvider();
 *   const code = drive.issueCode();
 *   const doc = drive.addFile({ name: 'Notes', mimeType: 'application/vnd.google-apps.document', content: 'hi' });
 *   drive.expireAccessTokens(); drive.rateLimit(2, 1); drive.revokeRefreshTokens();
 *   drive.requests;                                   // every request: method, path, query, grant_type
 */
import http from 'node:http';
import type net from 'node:net';
import { randomBytes } from 'node:crypto';
import type { DriveSettings } from '../../src/services/data-connectors/sources/drive';

export interface DoubleFile {
  id: string;
  name: string;
  mimeType: string;
  content: Buffer;
  parents: string[];
  version: number;
  modifiedTime: string;
  /** Answers 403 insufficientFilePermissions to everyone. */
  forbidden?: boolean;
  trashed?: boolean;
}

export interface DriveRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  grantType?: string;
}

const CLIENT_ID = 'tarmac-test-client.apps.example';
const CLIENT_SECRET = 'test-client-secret';
const REDIRECT_URI = 'postmessage';

export async function startDriveProvider(opts: { accessTokenSeconds?: number; pageSize?: number } = {}) {
  const codes = new Set<string>();
  const accessTokens = new Map<string, { expired: boolean }>();
  const refreshTokens = new Set<string>();
  const files = new Map<string, DoubleFile>();
  const requests: DriveRequest[] = [];
  let limited = { count: 0, retryAfter: 1 };
  const token = (prefix: string) => `${prefix}${randomBytes(12).toString('hex')}`;

  const json = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', ...headers });
    res.end(JSON.stringify(body));
  };
  const googleError = (res: http.ServerResponse, status: number, reason: string, message: string, headers = {}) =>
    json(
      res,
      status,
      { error: { code: status, message, errors: [{ message, domain: 'global', reason }], status: reason } },
      headers,
    );

  const metadata = (f: DoubleFile, fields: string | undefined) => {
    const all: Record<string, unknown> = {
      kind: 'drive#file',
      id: f.id,
      name: f.name,
      mimeType: f.mimeType,
      parents: f.parents,
      version: String(f.version),
      modifiedTime: f.modifiedTime,
      trashed: Boolean(f.trashed),
      ...(f.mimeType.startsWith('application/vnd.google-apps.') ? {} : { size: String(f.content.length) }),
    };
    if (!fields || fields === '*') return all;
    return Object.fromEntries(
      fields
        .split(',')
        .map((k) => [k.trim(), all[k.trim()]])
        .filter(([, v]) => v !== undefined),
    );
  };

  const tokenEndpoint = (form: URLSearchParams, res: http.ServerResponse) => {
    if (form.get('client_id') !== CLIENT_ID || form.get('client_secret') !== CLIENT_SECRET) {
      return json(res, 401, { error: 'invalid_client', error_description: 'Unauthorized' });
    }
    const issue = (withRefresh: boolean) => {
      const access = token('ya29.');
      accessTokens.set(access, { expired: false });
      const body: Record<string, unknown> = {
        access_token: access,
        expires_in: opts.accessTokenSeconds ?? 3599,
        scope: 'https://www.googleapis.com/auth/drive.readonly',
        token_type: 'Bearer',
      };
      if (withRefresh) {
        const refresh = token('1//');
        refreshTokens.add(refresh);
        body.refresh_token = refresh;
      }
      json(res, 200, body, { 'cache-control': 'no-cache, no-store, max-age=0, must-revalidate' });
    };
    const grant = form.get('grant_type');
    if (grant === 'authorization_code') {
      const code = form.get('code') ?? '';
      if (!codes.delete(code)) return json(res, 400, { error: 'invalid_grant', error_description: 'Bad Request' });
      if (form.get('redirect_uri') !== REDIRECT_URI) {
        return json(res, 400, { error: 'redirect_uri_mismatch', error_description: 'Bad Request' });
      }
      return issue(true);
    }
    if (grant === 'refresh_token') {
      if (!refreshTokens.has(form.get('refresh_token') ?? '')) {
        return json(res, 400, { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' });
      }
      return issue(false);
    }
    json(res, 400, { error: 'unsupported_grant_type', error_description: `Invalid grant_type: ${grant}` });
  };

  const filesApi = (url: URL, req: http.IncomingMessage, res: http.ServerResponse) => {
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const known = bearer ? accessTokens.get(bearer) : undefined;
    if (!known || known.expired) {
      return googleError(
        res,
        401,
        'authError',
        'Request had invalid authentication credentials. Expected OAuth 2 access token.',
        {
          'www-authenticate': 'Bearer realm="https://accounts.google.com/", error="invalid_token"',
        },
      );
    }
    if (limited.count > 0) {
      limited.count--;
      return googleError(res, 429, 'rateLimitExceeded', 'Rate Limit Exceeded', {
        'retry-after': String(limited.retryAfter),
      });
    }
    const q = url.searchParams;
    const rest = url.pathname.slice('/drive/v3/files'.length);
    if (rest === '' || rest === '/') {
      const parent = /^'([^']+)' in parents and trashed = false$/.exec(q.get('q') ?? '')?.[1];
      if (!parent) return googleError(res, 400, 'invalid', 'Invalid Value');
      const children = [...files.values()].filter((f) => f.parents.includes(parent) && !f.trashed);
      const pageSize = Math.min(Number(q.get('pageSize') ?? 100), opts.pageSize ?? 100);
      const offset = Number(q.get('pageToken') ?? 0);
      const page = children.slice(offset, offset + pageSize);
      const inner = /files\(([^)]*)\)/.exec(q.get('fields') ?? '')?.[1];
      return json(res, 200, {
        kind: 'drive#fileList',
        ...(offset + pageSize < children.length ? { nextPageToken: String(offset + pageSize) } : {}),
        files: page.map((f) => metadata(f, inner)),
      });
    }
    const m = /^\/([^/]+)(\/export)?$/.exec(rest);
    const f = m ? files.get(decodeURIComponent(m[1])) : undefined;
    if (!m || !f) return googleError(res, 404, 'notFound', `File not found: ${m?.[1] ?? ''}.`);
    if (f.forbidden)
      return googleError(
        res,
        403,
        'insufficientFilePermissions',
        'The user does not have sufficient permissions for this file.',
      );
    const native = f.mimeType.startsWith('application/vnd.google-apps.');
    if (m[2]) {
      if (!native) return googleError(res, 403, 'fileNotExportable', 'Export only supports Docs Editors files.');
      res.writeHead(200, { 'content-type': `${q.get('mimeType') ?? 'text/plain'}` });
      return res.end(f.content);
    }
    if (q.get('alt') === 'media') {
      if (native) {
        return googleError(
          res,
          403,
          'fileNotDownloadable',
          'Only files with binary content can be downloaded. Use Export with Docs Editors files.',
        );
      }
      res.writeHead(200, { 'content-type': f.mimeType, 'content-length': String(f.content.length) });
      return res.end(f.content);
    }
    json(res, 200, metadata(f, q.get('fields') ?? undefined));
  };

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://drive.local');
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      const form = new URLSearchParams(body);
      requests.push({
        method: req.method ?? '',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        ...(url.pathname === '/token' ? { grantType: form.get('grant_type') ?? '' } : {}),
      });
      if (req.method === 'POST' && url.pathname === '/token') return tokenEndpoint(form, res);
      if (req.method === 'GET' && url.pathname.startsWith('/drive/v3/files')) return filesApi(url, req, res);
      googleError(res, 404, 'notFound', 'Not Found');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  let nextId = 1;

  return {
    baseUrl,
    requests,
    files,
    settings: (): DriveSettings => ({
      tokenUrl: `${baseUrl}/token`,
      apiBaseUrl: baseUrl,
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      redirectUri: REDIRECT_URI,
    }),
    /** A fresh one-use authorization code, as the browser flow would hand to the client. */
    issueCode: () => {
      const code = token('4/0A');
      codes.add(code);
      return code;
    },
    addFile: (f: Partial<Omit<DoubleFile, 'content'>> & { name: string; content?: string | Buffer }): string => {
      const id = f.id ?? `f${String(nextId++).padStart(3, '0')}${randomBytes(6).toString('hex')}`;
      files.set(id, {
        id,
        name: f.name,
        mimeType: f.mimeType ?? 'text/plain',
        content: Buffer.from(f.content ?? ''),
        parents: f.parents ?? ['root'],
        version: f.version ?? 1,
        modifiedTime: new Date(Date.UTC(2026, 0, 1)).toISOString(),
        forbidden: f.forbidden,
        trashed: f.trashed,
      });
      return id;
    },
    updateFile: (id: string, content: string | Buffer) => {
      const f = files.get(id)!;
      f.content = Buffer.from(content);
      f.version++;
      f.modifiedTime = new Date(Date.parse(f.modifiedTime) + 60_000).toISOString();
    },
    /** Every access token issued so far now answers 401 (as an expired one does). */
    expireAccessTokens: () => accessTokens.forEach((t) => (t.expired = true)),
    revokeRefreshTokens: () => refreshTokens.clear(),
    /** The next `count` files API requests answer 429 with `Retry-After: retryAfter`. */
    rateLimit: (count: number, retryAfter: number) => (limited = { count, retryAfter }),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export type DriveProvider = Awaited<ReturnType<typeof startDriveProvider>>;
