// The code host's OAuth token endpoint, in GitHub's wire protocol: `POST <base>/login/oauth/access_token`
// with client_id, client_secret and either `code` (exchange) or `grant_type=refresh_token` + `refresh_token`
// (refresh), `Accept: application/json`. The endpoint answers 200 even when it refuses: the refusal is an
// `error` member (`bad_verification_code`, `bad_refresh_token`, `incorrect_client_credentials`, ...).

export interface OAuthApp {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
}

/** What the token endpoint granted. `expiresIn` absent: the token does not expire (no refresh token then). */
export interface TokenGrant {
  accessToken: string;
  refreshToken?: string;
  expiresIn?: number;
  refreshTokenExpiresIn?: number;
  scope?: string;
}

/** The provider refused (its `error` and `error_description`): the caller's input was at fault. */
export class OAuthRefused extends Error {
  constructor(
    readonly error: string,
    readonly description: string | undefined,
  ) {
    super(description ? `${error}: ${description}` : error);
  }
}

/** The provider could not be reached or answered something that is not a token endpoint's answer. */
export class OAuthUnavailable extends Error {}

const TIMEOUT_MS = 15_000;
/** Token endpoint answers are small; a larger one is not a token. */
const MAX_ANSWER_BYTES = 64 * 1024;

export const exchangeCode = (app: OAuthApp, code: string) => tokenRequest(app, { code });

export const refreshToken = (app: OAuthApp, refresh: string) =>
  tokenRequest(app, { grant_type: 'refresh_token', refresh_token: refresh });

async function tokenRequest(app: OAuthApp, params: Record<string, string>): Promise<TokenGrant> {
  const url = `${app.baseUrl}/login/oauth/access_token`;
  let res: Response;
  let text: string;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: app.clientId, client_secret: app.clientSecret, ...params }),
      redirect: 'error',
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    text = await readCapped(res, MAX_ANSWER_BYTES);
  } catch (err) {
    if (err instanceof OAuthUnavailable) throw err;
    throw new OAuthUnavailable(`The code host's token endpoint could not be reached: ${(err as Error).message}`);
  }
  let body: Record<string, unknown> | undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed))
      body = parsed as Record<string, unknown>;
  } catch {
    // below
  }
  if (typeof body?.error === 'string') {
    const description = typeof body.error_description === 'string' ? body.error_description : undefined;
    throw new OAuthRefused(body.error, description);
  }
  if (!res.ok || !body || typeof body.access_token !== 'string' || body.access_token === '') {
    throw new OAuthUnavailable(`The code host's token endpoint answered ${res.status} without an access token`);
  }
  const seconds = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : undefined);
  return {
    accessToken: body.access_token,
    refreshToken: typeof body.refresh_token === 'string' && body.refresh_token ? body.refresh_token : undefined,
    expiresIn: seconds(body.expires_in),
    refreshTokenExpiresIn: seconds(body.refresh_token_expires_in),
    scope: typeof body.scope === 'string' ? body.scope : undefined,
  };
}

/** The answer as text, refusing (and abandoning) one larger than `max` bytes instead of buffering it. */
async function readCapped(res: Response, max: number): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = res.body?.getReader();
  for (;;) {
    const next = await reader?.read();
    if (!next || next.done) break;
    size += next.value.byteLength;
    if (size > max) {
      await reader!.cancel();
      throw new OAuthUnavailable("The code host's token endpoint answered too much");
    }
    chunks.push(next.value);
  }
  return Buffer.concat(chunks).toString('utf8');
}
