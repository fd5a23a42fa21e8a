// The `drive` source: files of a file storage provider speaking Google Drive's wire protocol (OAuth 2.0
// authorization-code grant at the token endpoint, files API v3). The connector's `auth_code` is exchanged once
// (exchangeDriveAuthCode) for an access token, a refresh token and an expiry, which the caller keeps encrypted
// (deps.tokens); the source refreshes the access token when it expires or the API answers 401. A folder id
// lists the folder's files (recursively). Google's own formats are exported as text (Docs, Slides: text/plain;
// Sheets: text/csv); other files are downloaded (`alt=media`). Version = the file's `version` counter.
import type { ConnectorSource, SourceContent, SourceContext, SourceItem, SourceItemError } from './source';
import { itemError, safeSegment, SourceError, SourceUnavailableError, toItemError } from './source-error';
import { DEFAULT_RETRY, fetchWithRetry, rateLimited, readCapped, readJson, type RetryPolicy } from './http';

export interface DriveSettings {
  /** The OAuth token endpoint (Google: https://oauth2.googleapis.com/token). */
  tokenUrl: string;
  /** Origin of the files API; `/drive/v3/files` is appended (Google: https://www.googleapis.com). */
  apiBaseUrl: string;
  clientId: string;
  clientSecret: string | undefined;
  /** The redirect URI the browser flow used to obtain the code (Google's popup code flow: `postmessage`). */
  redirectUri: string;
}

/** What the caller persists, encrypted, per connector. */
export interface DriveToken {
  accessToken: string;
  refreshToken?: string;
  /** Epoch milliseconds. */
  expiresAt: number;
}

export interface DriveTokenStore {
  load(): Promise<DriveToken | undefined>;
  save(token: DriveToken): Promise<void>;
}

export interface DriveConfig {
  file_ids: string[];
  /** Exchanged when `tokens` holds no token yet (a caller may also exchange it itself, at create time). */
  auth_code?: string;
}

export interface DriveDeps {
  settings: DriveSettings;
  tokens: DriveTokenStore;
  now?: () => number;
  retry?: RetryPolicy;
}

/** The drive refused the code, the refresh token or the client: nothing can be read until the user reconnects. */
export class DriveAuthError extends SourceUnavailableError {
  constructor(message: string) {
    super('Unauthorized', message);
  }
}

/** An access token this close to its expiry is refreshed first. */
const EXPIRY_MARGIN_MS = 60_000;
const FOLDER = 'application/vnd.google-apps.folder';
/** Google's own formats and what they are exported as. */
const EXPORTS: Record<string, { mimeType: string; ext: string }> = {
  'application/vnd.google-apps.document': { mimeType: 'text/plain', ext: '.txt' },
  'application/vnd.google-apps.presentation': { mimeType: 'text/plain', ext: '.txt' },
  'application/vnd.google-apps.spreadsheet': { mimeType: 'text/csv', ext: '.csv' },
};
const FILE_ID = /^[A-Za-z0-9_-]{1,200}$/;
const FIELDS = 'id,name,mimeType,modifiedTime,version,size,trashed';
/** Folders are followed this deep below a listed folder id. */
const MAX_FOLDER_DEPTH = 20;

interface DriveFile {
  id: string;
  name?: string;
  mimeType?: string;
  modifiedTime?: string;
  version?: string;
  size?: string;
  trashed?: boolean;
}

async function tokenRequest(
  settings: DriveSettings,
  form: Record<string, string>,
  signal: AbortSignal | undefined,
  now: number,
): Promise<DriveToken & { refreshToken?: string }> {
  if (!settings.clientId || !settings.clientSecret) {
    throw new DriveAuthError(
      'drive connectors are not configured on this installation (DRIVE_DATA_CONNECTOR_CLIENT_ID and DRIVE_DATA_CONNECTOR_CLIENT_SECRET)',
    );
  }
  const res = await fetch(settings.tokenUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams({ client_id: settings.clientId, client_secret: settings.clientSecret, ...form }),
    signal,
  }).catch((err: Error) => {
    if (err.name === 'AbortError') throw err;
    throw new SourceUnavailableError('Unreachable', `the drive token endpoint did not answer: ${err.message}`);
  });
  const body = await readJson<Record<string, unknown>>(res, 'drive token endpoint').catch(
    () => ({}) as Record<string, unknown>,
  );
  if (!res.ok || typeof body.access_token !== 'string') {
    const reason = [body.error, body.error_description].filter((x) => typeof x === 'string').join(': ');
    const what = form.grant_type === 'refresh_token' ? 'the stored refresh token' : 'the auth_code';
    throw new DriveAuthError(
      `the drive refused ${what} (HTTP ${res.status}${reason ? `, ${reason}` : ''}); connect the drive again for a new auth_code`,
    );
  }
  const expiresIn = typeof body.expires_in === 'number' ? body.expires_in : 3600;
  return {
    accessToken: body.access_token,
    ...(typeof body.refresh_token === 'string' ? { refreshToken: body.refresh_token } : {}),
    expiresAt: now + expiresIn * 1000,
  };
}

/** Exchanges an authorization code (grant_type=authorization_code). A refused code is a DriveAuthError. */
export function exchangeDriveAuthCode(
  settings: DriveSettings,
  code: string,
  opts: { signal?: AbortSignal; now?: () => number } = {},
): Promise<DriveToken> {
  return tokenRequest(
    settings,
    { grant_type: 'authorization_code', code, redirect_uri: settings.redirectUri },
    opts.signal,
    (opts.now ?? Date.now)(),
  );
}

export function driveSource(config: DriveConfig, deps: DriveDeps): ConnectorSource {
  const now = deps.now ?? Date.now;
  const retry = deps.retry ?? DEFAULT_RETRY;
  const filesUrl = `${deps.settings.apiBaseUrl.replace(/\/+$/, '')}/drive/v3/files`;
  let current: DriveToken | undefined;
  let pending: Promise<DriveToken> | undefined;

  async function obtain(force: boolean, signal: AbortSignal): Promise<DriveToken> {
    current ??= await deps.tokens.load();
    if (!current) {
      if (!config.auth_code) throw new DriveAuthError('the drive connector holds no token and no auth_code');
      current = await exchangeDriveAuthCode(deps.settings, config.auth_code, { signal, now });
      await deps.tokens.save(current);
      return current;
    }
    if (!force && current.expiresAt - EXPIRY_MARGIN_MS > now()) return current;
    if (!current.refreshToken) throw new DriveAuthError('the drive access token expired and there is no refresh token');
    const refreshed = await tokenRequest(
      deps.settings,
      { grant_type: 'refresh_token', refresh_token: current.refreshToken },
      signal,
      now(),
    );
    // Google answers a refresh without a new refresh token: the old one stays valid.
    current = { ...refreshed, refreshToken: refreshed.refreshToken ?? current.refreshToken };
    await deps.tokens.save(current);
    return current;
  }
  /** One refresh at a time, shared by concurrent callers. */
  function accessToken(force: boolean, signal: AbortSignal, stale?: string): Promise<DriveToken> {
    if (force && current && current.accessToken !== stale) return Promise.resolve(current); // already refreshed
    pending ??= obtain(force, signal).finally(() => (pending = undefined));
    return pending;
  }

  /** A files API GET with the bearer token; a 401 refreshes the token once and retries. */
  async function api(url: string, ctx: SourceContext, what: string): Promise<Response> {
    const attempt = async (token: string) => {
      try {
        return await fetchWithRetry(
          url,
          () => ({ headers: { authorization: `Bearer ${token}` } }),
          ctx.signal,
          retry,
          (s) => ctx.progress(`${what}: rate limited, waiting ${s} s`),
        );
      } catch (err) {
        if ((err as Error).name === 'AbortError') throw err;
        throw new SourceUnavailableError('Unreachable', `the drive did not answer: ${(err as Error).message}`);
      }
    };
    const token = (await accessToken(false, ctx.signal)).accessToken;
    let res = await attempt(token);
    if (res.status === 401) {
      await res.body?.cancel();
      res = await attempt((await accessToken(true, ctx.signal, token)).accessToken);
      if (res.status === 401) {
        await res.body?.cancel();
        throw new DriveAuthError('the drive refused a freshly refreshed access token (HTTP 401)');
      }
    }
    return res;
  }

  /** A non-2xx files API answer as the item's error (Google reports some rate limits as 403). */
  async function failure(res: Response, uri: string, what: string): Promise<SourceError> {
    if (res.status === 429) return rateLimited(res, what);
    const body = await readJson<{ error?: { message?: string; errors?: Array<{ reason?: string }> } }>(res, what).catch(
      () => ({}) as never,
    );
    const reason = body.error?.errors?.[0]?.reason ?? '';
    const message = body.error?.message ?? `HTTP ${res.status}`;
    if (res.status === 403 && /rateLimitExceeded/.test(reason)) return rateLimited(res, what);
    if (res.status === 404) return new SourceError('NotFound', `${uri}: ${message}`);
    if (res.status === 403) return new SourceError('Forbidden', `${uri}: ${message}`);
    return new SourceError('FetchFailed', `${uri}: HTTP ${res.status}: ${message}`);
  }

  function toItem(f: DriveFile): SourceItem | SourceItemError {
    const uri = `drive://${f.id}`;
    const mimeType = f.mimeType ?? 'application/octet-stream';
    const exported = EXPORTS[mimeType];
    if (mimeType.startsWith('application/vnd.google-apps.') && !exported) {
      return itemError(uri, 'Unsupported', `${uri}: ${mimeType} files cannot be exported as text`);
    }
    let name = safeSegment(f.name ?? f.id, f.id);
    if (exported && !name.endsWith(exported.ext)) name += exported.ext;
    return {
      path: `${safeSegment(f.id, 'file')}/${name}`,
      sourceUri: uri,
      title: f.name,
      version: f.version ?? f.modifiedTime,
      meta: {
        drive_file_id: f.id,
        mime_type: mimeType,
        ...(f.modifiedTime ? { modified_time: f.modifiedTime } : {}),
        ...(f.size ? { size: f.size } : {}),
      },
    };
  }

  async function* folder(
    id: string,
    depth: number,
    ctx: SourceContext,
    seen: Set<string>,
  ): AsyncGenerator<SourceItem | SourceItemError> {
    let pageToken: string | undefined;
    do {
      const q = new URLSearchParams({
        q: `'${id}' in parents and trashed = false`,
        fields: `nextPageToken,files(${FIELDS})`,
        pageSize: '100',
        supportsAllDrives: 'true',
        includeItemsFromAllDrives: 'true',
        ...(pageToken ? { pageToken } : {}),
      });
      const res = await api(`${filesUrl}?${q}`, ctx, `folder ${id}`);
      if (!res.ok) {
        yield toItemError(`drive://${id}`, await failure(res, `drive://${id}`, `folder ${id}`));
        return;
      }
      const page = await readJson<{ nextPageToken?: string; files?: DriveFile[] }>(res, `folder ${id}`);
      for (const f of page.files ?? []) yield* file(f, depth, ctx, seen);
      pageToken = page.nextPageToken;
      ctx.progress(`listed ${seen.size} drive files`);
    } while (pageToken);
  }

  async function* file(
    f: DriveFile,
    depth: number,
    ctx: SourceContext,
    seen: Set<string>,
  ): AsyncGenerator<SourceItem | SourceItemError> {
    if (seen.has(f.id)) return;
    seen.add(f.id);
    if (f.mimeType !== FOLDER) {
      const item = toItem(f);
      const size = Number(f.size);
      if (!('error' in item) && Number.isFinite(size) && size > ctx.maxItemBytes) {
        yield itemError(
          item.sourceUri,
          'TooLarge',
          `${item.sourceUri} is larger than the limit of ${ctx.maxItemBytes} bytes; not read`,
        );
      } else yield item;
    } else if (depth >= MAX_FOLDER_DEPTH) {
      yield itemError(
        `drive://${f.id}`,
        'TooDeep',
        `drive://${f.id}: folders deeper than ${MAX_FOLDER_DEPTH} are not followed`,
      );
    } else yield* folder(f.id, depth + 1, ctx, seen);
  }

  return {
    async *list(ctx) {
      const seen = new Set<string>();
      for (const id of config.file_ids) {
        const uri = `drive://${id}`;
        if (!FILE_ID.test(id)) {
          yield itemError(id, 'InvalidFileId', `${JSON.stringify(id)} is not a drive file id`);
          continue;
        }
        const res = await api(
          `${filesUrl}/${id}?${new URLSearchParams({ fields: FIELDS, supportsAllDrives: 'true' })}`,
          ctx,
          uri,
        );
        if (!res.ok) {
          yield toItemError(uri, await failure(res, uri, uri));
          continue;
        }
        const meta = await readJson<DriveFile>(res, uri);
        if (meta.trashed) yield itemError(uri, 'NotFound', `${uri} is in the drive's trash`);
        else yield* file(meta, 0, ctx, seen);
      }
    },

    async read(item, ctx): Promise<SourceContent> {
      const id = item.meta?.drive_file_id ?? item.sourceUri.replace(/^drive:\/\//, '');
      if (!FILE_ID.test(id)) throw new SourceError('InvalidFileId', `${item.sourceUri} names no drive file`);
      const mimeType = item.meta?.mime_type ?? 'application/octet-stream';
      const exported = EXPORTS[mimeType];
      const url = exported
        ? `${filesUrl}/${id}/export?${new URLSearchParams({ mimeType: exported.mimeType })}`
        : `${filesUrl}/${id}?${new URLSearchParams({ alt: 'media', supportsAllDrives: 'true' })}`;
      const res = await api(url, ctx, item.sourceUri);
      if (!res.ok) throw await failure(res, item.sourceUri, item.sourceUri);
      const body = await readCapped(res, ctx.maxItemBytes, item.sourceUri);
      return {
        body,
        contentType: exported ? `${exported.mimeType}; charset=utf-8` : res.headers.get('content-type') || mimeType,
        title: item.title,
      };
    },
  };
}
