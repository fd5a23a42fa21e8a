// Connections: a code host account linked by OAuth. Creating one exchanges `credentials.codehost.auth_code`
// at the code host's token endpoint; the tokens are stored sealed (bound to the connection) and opened only
// by GetToken and by deployments that clone with the connection. An expiring token is refreshed when it is
// read, under a row lock, so concurrent readers never spend the same (rotating) refresh token twice.
import { randomUUID } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import type { Caller } from '../caller';
import type { Config } from '../../config';
import { badRequest, conflict, HttpError, notFound, serviceUnavailable } from '../../errors';
import {
  exchangeCode,
  OAuthApp,
  OAuthRefused,
  OAuthUnavailable,
  refreshToken,
  TokenGrant,
} from '../../drivers/codehost/oauth';
import { Connection } from '../../persistence/entities';
import type { CodeLocation } from '../../persistence/entities/code-resource';
import { DeploymentFailure } from '../../runtime/build/failure';
import type { SecretBox } from '../../security/secret-box';

export interface ConnectionsDeps {
  ds: DataSource;
  box: SecretBox;
  config: Pick<Config, 'codehostOAuth'>;
}

/** A list answers at most this many (the interface's list has no pagination). */
export const MAX_LISTED_CONNECTIONS = 1000;
/** A token this close to its expiry is refreshed before it is handed out (a clone must not outlive it). */
const REFRESH_MARGIN_MS = 5 * 60_000;

const accessBinding = (id: string) => `connection:${id}:access`;
const refreshBinding = (id: string) => `connection:${id}:refresh`;

export const NOT_CONFIGURED =
  'Connections are not configured on this installation: the operator sets CODEHOST_OAUTH_CLIENT_ID and ' +
  'CODEHOST_OAUTH_CLIENT_SECRET (docs/connections-and-billing.md)';

function oauthApp(config: ConnectionsDeps['config']): OAuthApp {
  if (!config.codehostOAuth) throw serviceUnavailable(NOT_CONFIGURED);
  return config.codehostOAuth;
}

/** The code host refusing our app's own credentials is the operator's to fix, not the caller's. */
const WRONG_APP = 'incorrect_client_credentials';

/** The provider's refusal of the caller's input is the caller's error; an unreachable provider or a wrong app is a 503. */
function providerError(err: unknown, what: string, path?: string): HttpError {
  if (err instanceof OAuthRefused && err.error === WRONG_APP)
    return serviceUnavailable(`The code host refused this installation's OAuth app (CODEHOST_OAUTH_*): ${err.message}`);
  if (err instanceof OAuthRefused) return badRequest(`The code host refused ${what}: ${err.message}`, path);
  if (err instanceof OAuthUnavailable) return serviceUnavailable(`${err.message}; try again later`);
  throw err;
}

function seal(box: SecretBox, row: Connection, grant: TokenGrant, now: Date) {
  const at = (seconds?: number) => (seconds ? new Date(now.getTime() + seconds * 1000) : null);
  row.access_token_encrypted = box.seal(grant.accessToken, accessBinding(row.connection_id));
  // A refresh without a new refresh token keeps the old one (GitHub rotates it; others may not).
  if (grant.refreshToken) {
    row.refresh_token_encrypted = box.seal(grant.refreshToken, refreshBinding(row.connection_id));
    row.refresh_token_expires_at = at(grant.refreshTokenExpiresIn);
  }
  row.expires_at = at(grant.expiresIn);
  if (grant.scope !== undefined) row.scope = grant.scope;
  row.updated_at = now;
}

export async function createConnection(
  deps: ConnectionsDeps,
  caller: Caller,
  body: { type: string; name?: string; credentials: { codehost: { auth_code: string } } },
): Promise<Connection> {
  const app = oauthApp(deps.config);
  let grant: TokenGrant;
  try {
    grant = await exchangeCode(app, body.credentials.codehost.auth_code);
  } catch (err) {
    throw providerError(err, 'the authorization code', '/body/credentials/codehost/auth_code');
  }
  const now = new Date();
  const row = Object.assign(new Connection(), {
    connection_id: randomUUID(),
    organization_id: caller.organizationId,
    type: body.type,
    name: body.name ?? body.type,
    refresh_token_encrypted: null,
    refresh_token_expires_at: null,
    scope: null,
    created_by: caller.actor,
    created_at: now,
  });
  seal(deps.box, row, grant, now);
  return deps.ds.getRepository(Connection).save(row);
}

export function listConnections(ds: DataSource, caller: Caller, type?: string): Promise<Connection[]> {
  return ds.getRepository(Connection).find({
    where: { organization_id: caller.organizationId, ...(type ? { type } : {}) },
    order: { created_at: 'DESC', connection_id: 'DESC' },
    take: MAX_LISTED_CONNECTIONS,
  });
}

/** The structures, functions and tools whose `codehost` code location names the connection. */
export async function resourcesUsing(
  db: DataSource | EntityManager,
  organizationId: string,
  connectionId: string,
): Promise<Array<{ resource_id: string; kind: string; name: string }>> {
  return db.query(
    `SELECT resource_id, kind, name FROM code_resources
      WHERE organization_id = $1 AND code->'codehost'->>'connection_id' = $2 ORDER BY created_at LIMIT 10`,
    [organizationId, connectionId],
  );
}

/** 409 while a structure (function, tool) clones with it, naming them; the row is locked meanwhile. */
export async function deleteConnection(ds: DataSource, caller: Caller, id: string): Promise<void> {
  await ds.transaction(async (em) => {
    const [row] = await em.query(
      `SELECT connection_id FROM connections WHERE connection_id = $1 AND organization_id = $2 FOR UPDATE`,
      [id, caller.organizationId],
    );
    if (!row) throw notFound('Connection');
    const users = await resourcesUsing(em, caller.organizationId, id);
    if (users.length) {
      const named = users.map((u) => `${u.kind} ${u.name} (${u.resource_id})`).join(', ');
      throw conflict(`Connection ${id} is used by ${named}: change their code location first`);
    }
    await em.query(`DELETE FROM connections WHERE connection_id = $1`, [id]);
  });
}

/**
 * The connection's access token, refreshed first when it expires within REFRESH_MARGIN_MS. 404 when the
 * organization has no such connection; 409 when it expired and cannot be refreshed (connect again).
 */
export async function connectionAccessToken(
  deps: ConnectionsDeps,
  organizationId: string,
  connectionId: string,
): Promise<string> {
  return deps.ds.transaction(async (em) => {
    const repo = em.getRepository(Connection);
    const row = await repo.findOne({
      where: { connection_id: connectionId, organization_id: organizationId },
      lock: { mode: 'pessimistic_write' },
    });
    if (!row) throw notFound('Connection');
    const now = new Date();
    if (!row.expires_at || row.expires_at.getTime() - REFRESH_MARGIN_MS > now.getTime()) {
      return deps.box.open(row.access_token_encrypted, accessBinding(row.connection_id));
    }
    const refreshable =
      row.refresh_token_encrypted && (!row.refresh_token_expires_at || row.refresh_token_expires_at > now);
    if (!refreshable) {
      throw conflict(`The token of connection ${connectionId} expired and cannot be refreshed: create it again`);
    }
    let grant: TokenGrant;
    try {
      grant = await refreshToken(
        oauthApp(deps.config),
        deps.box.open(row.refresh_token_encrypted!, refreshBinding(row.connection_id)),
      );
    } catch (err) {
      if (err instanceof OAuthRefused && err.error !== WRONG_APP)
        throw conflict(`The code host refused to refresh the token of connection ${connectionId}: ${err.message}`);
      throw providerError(err, 'the refresh');
    }
    seal(deps.box, row, grant, now);
    await repo.save(row);
    return grant.accessToken;
  });
}

/**
 * The token a deployment clones with when its `codehost` code location names a connection (undefined when it
 * names none). A connection that is gone or cannot be refreshed fails the deployment (the user's to fix); a
 * code host that cannot be reached throws as is, so the build activity is retried.
 */
export async function codeLocationToken(
  deps: ConnectionsDeps,
  organizationId: string,
  code: CodeLocation,
): Promise<string | undefined> {
  const connectionId = 'codehost' in code ? code.codehost.connection_id : undefined;
  if (!connectionId) return undefined;
  try {
    return await connectionAccessToken(deps, organizationId, connectionId);
  } catch (err) {
    if (err instanceof HttpError && err.status < 500)
      throw new DeploymentFailure('ConnectionUnavailable', `Connection ${connectionId}: ${err.message}`);
    throw err;
  }
}
