// A real OpenID Connect provider for the sign-in tests: the certified `oidc-provider` package on a loopback
// port, with one confidential client (code flow, PKCE required) whose redirect URI is the api's callback. Its
// login and consent are answered at once for the account the test names next (`signInAs`), as a person who
// signs in at the provider would: no form, but the provider's own interaction endpoints and session cookies.
import http from 'node:http';
import type net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Account, Configuration } from 'oidc-provider';

export interface OidcAccount {
  sub: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
}

export interface OidcProviderDouble {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The account the next sign-in at the provider is of. */
  signInAs(account: OidcAccount): void;
  close(): Promise<void>;
}

export async function startOidcProvider(opts: { redirectUri: string }): Promise<OidcProviderDouble> {
  const { default: Provider } = await import('oidc-provider');
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = 'tarmac-test';
  const clientSecret = `secret-${Math.random().toString(36).slice(2)}`;
  let next: OidcAccount = { sub: 'nobody' };
  const accounts = new Map<string, OidcAccount>();

  const configuration: Configuration = {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [opts.redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    pkce: { required: () => true },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    cookies: { keys: ['tarmac-test-oidc-cookies'] },
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 },
    findAccount: async (_ctx, sub): Promise<Account | undefined> => {
      const account = accounts.get(sub);
      if (!account) return undefined;
      return {
        accountId: sub,
        claims: async () => {
          const { sub: subject, ...claims } = account;
          return { sub: subject, ...claims };
        },
      };
    },
  };
  const provider = new Provider(issuer, configuration);
  // The provider runs on plain http on loopback: no proxy, no TLS.
  provider.proxy = false;

  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const match = /^\/interaction\/([^/?]+)/.exec(req.url ?? '');
    if (!match) return void provider.callback()(req, res);
    void (async () => {
      try {
        const details = await provider.interactionDetails(req, res);
        if (details.prompt.name === 'login') {
          accounts.set(next.sub, next);
          await provider.interactionFinished(
            req,
            res,
            { login: { accountId: next.sub } },
            {
              mergeWithLastSubmission: false,
            },
          );
          return;
        }
        const grant = new provider.Grant({
          accountId: details.session!.accountId,
          clientId: details.params.client_id as string,
        });
        grant.addOIDCScope('openid email profile');
        await provider.interactionFinished(
          req,
          res,
          { consent: { grantId: await grant.save() } },
          {
            mergeWithLastSubmission: true,
          },
        );
      } catch (err) {
        res.statusCode = 500;
        res.end(String(err));
      }
    })();
  });

  const sockets = new Set<net.Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  return {
    issuer,
    clientId,
    clientSecret,
    signInAs(account) {
      next = account;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
