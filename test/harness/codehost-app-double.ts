/**
 * A local code host (GitHub App wire protocol) for tests (node:http): `POST /app/installations/{id}/access_tokens`
 * authenticated by an app JWT (`Authorization: Bearer <jwt>`), verified RS256 with the registered app's public
 * key (iss = the app id, exp in the future and at most 10 minutes after iat), answering 201 `{token,
 * expires_at}` or GitHub's 401 `{message}`; and the sending side, `signedPush(...)`: X-Hub-Signature-256 =
 * sha256=HMAC-SHA256(webhook secret, body), with X-GitHub-Event and X-GitHub-Delivery.
 *
 *   const host = await startCodehostAppDouble();      // the stack runs one: getStack().codehostApp
 *   const app = host.addApp();                        // an app: its id and an RSA key pair (PEM)
 *   host.issued;                                      // the installation tokens handed out
 */
import http from 'node:http';
import type net from 'node:net';
import { createHmac, generateKeyPairSync, randomBytes, randomUUID, verify } from 'node:crypto';

export interface CodehostAppDouble {
  /** CODEHOST_API_BASE_URL. */
  baseUrl: string;
  issued: Array<{ appId: string; installationId: number; token: string }>;
  refused: string[];
  addApp(): { appId: string; privateKeyPem: string };
  close(): Promise<void>;
}

export function signedCodehostDelivery(secret: string, body: string, event: string, deliveryId = randomUUID()) {
  return {
    'content-type': 'application/json',
    'x-github-event': event,
    'x-github-delivery': deliveryId,
    'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
  };
}

export async function startCodehostAppDouble(): Promise<CodehostAppDouble> {
  const apps = new Map<string, string>(); // app id → public key PEM
  const issued: CodehostAppDouble['issued'] = [];
  const refused: string[] = [];

  const unauthorized = (res: http.ServerResponse, message: string) => {
    refused.push(message);
    res.writeHead(401, { 'content-type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify({ message, documentation_url: 'https://docs.github.com/rest' }));
  };

  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const m = /^\/app\/installations\/(\d+)\/access_tokens$/.exec(req.url ?? '');
      if (req.method !== 'POST' || !m) {
        res.writeHead(404, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ message: 'Not Found' }));
      }
      const jwt = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
      const parts = jwt?.split('.');
      if (!parts || parts.length !== 3) return unauthorized(res, 'A JSON web token could not be decoded');
      let header: any;
      let claims: any;
      try {
        header = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8'));
        claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
      } catch {
        return unauthorized(res, 'A JSON web token could not be decoded');
      }
      const publicKey = apps.get(String(claims.iss));
      if (header.alg !== 'RS256' || !publicKey) return unauthorized(res, 'Integration not found');
      const signed = verify(
        'sha256',
        Buffer.from(`${parts[0]}.${parts[1]}`),
        publicKey,
        Buffer.from(parts[2], 'base64url'),
      );
      if (!signed) return unauthorized(res, 'A JSON web token could not be decoded');
      const now = Math.floor(Date.now() / 1000);
      if (!(claims.exp > now) || claims.exp - claims.iat > 600 || claims.iat > now + 60)
        return unauthorized(res, "'Expiration time' claim ('exp') is too far in the future or expired");
      const token = `ghs_${randomBytes(18).toString('hex')}`;
      issued.push({ appId: String(claims.iss), installationId: Number(m[1]), token });
      res.writeHead(201, { 'content-type': 'application/json; charset=utf-8' });
      res.end(
        JSON.stringify({
          token,
          expires_at: new Date(Date.now() + 3600_000).toISOString(),
          permissions: { contents: 'read' },
          repository_selection: 'all',
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    issued,
    refused,
    addApp: () => {
      const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      const appId = String(100000 + Math.floor(Math.random() * 900000));
      apps.set(appId, publicKey.export({ type: 'spki', format: 'pem' }).toString());
      return { appId, privateKeyPem: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString() };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
