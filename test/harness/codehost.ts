/**
 * A local code host for tests (node:http) speaking GitHub's wire protocols:
 *
 * - OAuth: `POST /login/oauth/access_token` (form or JSON: client_id, client_secret and `code`, or
 *   `grant_type=refresh_token` with `refresh_token`), answering JSON when asked with `Accept: application/json`
 *   and, as GitHub does, 200 with `{error, error_description, error_uri}` when it refuses (bad_verification_code,
 *   bad_refresh_token, incorrect_client_credentials). Codes are single use. Tokens of an expiring grant carry
 *   `expires_in`, `refresh_token` and `refresh_token_expires_in`; a refresh rotates the refresh token.
 * - git over HTTPS (smart HTTP, through the real `git http-backend`) for the repositories under `root`
 *   (`<root>/<owner>/<name>.git`), each one private: only `Authorization: Basic x-access-token:<token>` with a
 *   live access token it issued passes; anything else is 401 with `WWW-Authenticate: Basic`.
 *
 *   const host = await startCodehost({ root, clientId, clientSecret });
 *   const code = host.issueCode({ expiresIn: 3600 });   // what the user's browser would bring back
 *   host.expire(accessToken);                            // the access token stops working (expiry passed)
 *   host.tokenRequests;                                   // every token request (form fields, Accept)
 *   host.gitRequests;                                     // every git request (path, authorization)
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type net from 'node:net';

export interface TokenRequest {
  accept: string | undefined;
  contentType: string | undefined;
  fields: Record<string, string>;
}

export interface GitRequest {
  path: string;
  authorized: boolean;
}

interface Grant {
  expiresIn?: number;
  refreshTokenExpiresIn?: number;
  scope?: string;
}

export interface Codehost {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  /** A fresh authorization code for a grant (default: a token that does not expire, GitHub's OAuth apps). */
  issueCode(grant?: Grant): string;
  /** Every code is accepted (the schema fuzzer's random codes); tokens then do not expire. */
  acceptAnyCode: boolean;
  /** The access token stops working at once (its expiry passed). */
  expire(accessToken: string): void;
  /** Whether this access token is live (issued and not expired or replaced by a refresh). */
  isLive(accessToken: string): boolean;
  tokenRequests: TokenRequest[];
  gitRequests: GitRequest[];
  close(): Promise<void>;
}

const ERROR_URI =
  'https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors';

export async function startCodehost(opts: {
  root: string;
  clientId?: string;
  clientSecret?: string;
}): Promise<Codehost> {
  const clientId = opts.clientId ?? `Iv1.${randomBytes(8).toString('hex')}`;
  const clientSecret = opts.clientSecret ?? randomBytes(20).toString('hex');
  const codes = new Map<string, Grant>();
  const refreshTokens = new Map<string, Grant>();
  const live = new Set<string>();
  const tokenRequests: TokenRequest[] = [];
  const gitRequests: GitRequest[] = [];

  const grantTokens = (grant: Grant) => {
    const accessToken = `gho_${randomBytes(18).toString('hex')}`;
    live.add(accessToken);
    const body: Record<string, unknown> = {
      access_token: accessToken,
      token_type: 'bearer',
      scope: grant.scope ?? 'repo',
    };
    if (grant.expiresIn) {
      const refresh = `ghr_${randomBytes(30).toString('hex')}`;
      refreshTokens.set(refresh, grant);
      Object.assign(body, {
        expires_in: grant.expiresIn,
        refresh_token: refresh,
        refresh_token_expires_in: grant.refreshTokenExpiresIn ?? 15_897_600,
      });
    }
    return body;
  };

  const tokenEndpoint = (fields: Record<string, string>): Record<string, unknown> => {
    const refuse = (error: string, description: string) => ({
      error,
      error_description: description,
      error_uri: ERROR_URI,
    });
    if (fields.client_id !== clientId || fields.client_secret !== clientSecret)
      return refuse('incorrect_client_credentials', 'The client_id and/or client_secret passed are incorrect.');
    if (fields.grant_type === 'refresh_token') {
      const grant = refreshTokens.get(fields.refresh_token ?? '');
      if (!grant) return refuse('bad_refresh_token', 'The refresh token passed is incorrect or expired.');
      refreshTokens.delete(fields.refresh_token); // rotated: a refresh token is good once
      return grantTokens(grant);
    }
    const grant = codes.get(fields.code ?? '') ?? (api.acceptAnyCode && fields.code ? {} : undefined);
    if (!grant) return refuse('bad_verification_code', 'The code passed is incorrect or expired.');
    codes.delete(fields.code);
    return grantTokens(grant);
  };

  const readBody = (req: http.IncomingMessage) =>
    new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => resolve(Buffer.concat(chunks)));
      req.on('error', reject);
    });

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/login/oauth/access_token' && req.method === 'POST') {
      const raw = (await readBody(req)).toString('utf8');
      const contentType = req.headers['content-type'];
      const fields: Record<string, string> = contentType?.startsWith('application/json')
        ? JSON.parse(raw)
        : Object.fromEntries(new URLSearchParams(raw));
      tokenRequests.push({ accept: req.headers.accept, contentType, fields });
      const answer = tokenEndpoint(fields);
      if (req.headers.accept?.includes('application/json')) {
        res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
        res.end(JSON.stringify(answer));
      } else {
        res.writeHead(200, { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' });
        res.end(new URLSearchParams(answer as Record<string, string>).toString());
      }
      return;
    }
    if (/^\/[^/]+\/[^/]+\.git\//.test(url.pathname)) return serveGit(req, res, url);
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ message: 'Not Found' }));
  });

  /** git's smart HTTP protocol, by the real `git http-backend` (CGI), behind token authentication. */
  function serveGit(req: http.IncomingMessage, res: http.ServerResponse, url: URL) {
    const auth = req.headers.authorization ?? '';
    const basic = /^Basic (.+)$/.exec(auth)?.[1];
    const [, password] = basic ? Buffer.from(basic, 'base64').toString('utf8').split(/:(.*)/s) : [];
    const authorized = password !== undefined && live.has(password);
    gitRequests.push({ path: url.pathname, authorized });
    if (!authorized) {
      res.writeHead(401, { 'www-authenticate': 'Basic realm="GitHub"', 'content-type': 'text/plain' });
      res.end('Authentication required\n');
      return;
    }
    const cgi = spawn('git', ['http-backend'], {
      env: {
        PATH: process.env.PATH,
        GIT_PROJECT_ROOT: opts.root,
        GIT_HTTP_EXPORT_ALL: '1',
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        REQUEST_METHOD: req.method ?? 'GET',
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        REMOTE_USER: 'x-access-token',
        REMOTE_ADDR: '127.0.0.1',
        ...(req.headers['git-protocol'] ? { GIT_PROTOCOL: String(req.headers['git-protocol']) } : {}),
        ...(req.headers['content-encoding'] ? { HTTP_CONTENT_ENCODING: String(req.headers['content-encoding']) } : {}),
      },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    req.pipe(cgi.stdin);
    let head = Buffer.alloc(0);
    let headersSent = false;
    cgi.stdout.on('data', (chunk: Buffer) => {
      if (headersSent) return void res.write(chunk);
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
        const colon = line.indexOf(':');
        const name = line.slice(0, colon).trim().toLowerCase();
        const value = line.slice(colon + 1).trim();
        if (name === 'status') status = Number(value.split(' ')[0]);
        else headers[name] = value;
      }
      res.writeHead(status, headers);
      headersSent = true;
      res.write(head.subarray(end + 4));
    });
    cgi.on('close', () => {
      if (!headersSent) res.writeHead(500);
      res.end();
    });
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  const api: Codehost = {
    baseUrl: `http://127.0.0.1:${port}`,
    clientId,
    clientSecret,
    acceptAnyCode: false,
    issueCode(grant = {}) {
      const code = randomBytes(10).toString('hex');
      codes.set(code, grant);
      return code;
    },
    expire: (token) => void live.delete(token),
    isLive: (token) => live.has(token),
    tokenRequests,
    gitRequests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return api;
}
