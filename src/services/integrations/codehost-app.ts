// The code host side (GitHub App wire protocol): authenticating as the app (a JWT signed RS256 with the app's
// private key: iss = app id, iat a minute in the past, exp 9 minutes ahead), exchanging it for an
// installation token (`POST /app/installations/{id}/access_tokens`), and which structures a push deploys.
import { createPrivateKey, sign } from 'node:crypto';
import type { CodeResource } from '../../persistence/entities';

const b64url = (data: Buffer | string) => Buffer.from(data).toString('base64url');

export function appJwt(appId: string, privateKeyPem: string, nowSeconds = Math.floor(Date.now() / 1000)): string {
  const header = b64url(JSON.stringify({ alg: 'RS256', typ: 'JWT' }));
  const claims = b64url(JSON.stringify({ iat: nowSeconds - 60, exp: nowSeconds + 540, iss: appId }));
  const key = createPrivateKey(privateKeyPem);
  return `${header}.${claims}.${b64url(sign('sha256', Buffer.from(`${header}.${claims}`), key))}`;
}

export class CodehostAppError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

/** An installation token (valid about an hour) for cloning the installation's repositories. */
export async function installationToken(
  baseUrl: string,
  appId: string,
  privateKeyPem: string,
  installationId: number,
): Promise<string> {
  let jwt: string;
  try {
    jwt = appJwt(appId, privateKeyPem);
  } catch (err) {
    throw new CodehostAppError(`The app's private key could not sign: ${(err as Error).message}`, false);
  }
  let res: Response;
  try {
    res = await fetch(`${baseUrl}/app/installations/${installationId}/access_tokens`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${jwt}`,
        accept: 'application/vnd.github+json',
        'x-github-api-version': '2022-11-28',
        'user-agent': 'tarmac',
      },
      signal: AbortSignal.timeout(30_000),
    });
  } catch (err) {
    throw new CodehostAppError(`The code host could not be reached: ${(err as Error).message}`, true);
  }
  const body = (await res.json().catch(() => ({}))) as { token?: string; message?: string };
  if (res.status !== 201 || !body.token) {
    throw new CodehostAppError(
      `The code host refused an installation token (${res.status}): ${body.message ?? 'no token'}`,
      res.status === 429 || res.status >= 500,
    );
  }
  return body.token;
}

/** What a push event says: the repository, the branch (refs/heads/<branch>; tags are not followed), the commit. */
export interface Push {
  owner: string;
  name: string;
  branch: string;
  commitSha: string;
  installationId?: number;
}

export function readPush(payload: any): Push | undefined {
  const ref = payload?.ref;
  const owner = payload?.repository?.owner?.login ?? payload?.repository?.owner?.name;
  const name = payload?.repository?.name;
  const commitSha = payload?.after ?? payload?.head_commit?.id;
  if (typeof ref !== 'string' || !ref.startsWith('refs/heads/') || typeof owner !== 'string') return undefined;
  if (typeof name !== 'string' || typeof commitSha !== 'string' || /^0+$/.test(commitSha)) return undefined;
  const installationId = payload?.installation?.id;
  return {
    owner,
    name,
    branch: ref.slice('refs/heads/'.length),
    commitSha,
    ...(Number.isSafeInteger(installationId) ? { installationId } : {}),
  };
}

/** A structure follows the push when its codehost location names that repository and branch (no pinned tag). */
export const follows = (s: CodeResource, p: Push) =>
  'codehost' in s.code &&
  s.code.codehost.owner.toLowerCase() === p.owner.toLowerCase() &&
  s.code.codehost.name.toLowerCase() === p.name.toLowerCase() &&
  s.code.codehost.push.branch === p.branch &&
  !s.code.codehost.push.tag;
