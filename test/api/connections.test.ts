// Connections against the stack's local code host (test/harness/codehost.ts), which speaks GitHub's OAuth
// token endpoint: the code exchange, refreshes of expiring tokens, refusals, and the 409 of a connection in use.
import { expect } from 'chai';
import { Connection } from '../../src/persistence/entities';
import { as } from '../harness/client';
import { getStack, newTenant, startApi } from '../harness/stack';

describe('connections', function () {
  this.timeout(60_000);

  it('exchanges the auth code at the code host, stores the tokens encrypted and answers them only by GetToken', async () => {
    const { codehost, ds, box } = getStack();
    const t = await newTenant('conn');
    const api = as(t.key);
    const code = codehost.issueCode();
    const created = await api.post('/api/connections', {
      type: 'codehost',
      name: 'my account',
      credentials: { codehost: { auth_code: code } },
    });
    expect(created.status, created.text).to.equal(201);
    expect(created.body).to.include({ name: 'my account', type: 'codehost', created_by: t.userId });
    expect(created.body).to.not.have.property('updated_at');
    const id = created.body.connection_id;

    // GitHub's wire protocol: a form POST with the app's credentials and the code, asking for JSON.
    const exchange = codehost.tokenRequests.find((r) => r.fields.code === code)!;
    expect(exchange.accept).to.include('application/json');
    expect(exchange.contentType).to.include('application/x-www-form-urlencoded');
    expect(exchange.fields).to.include({ client_id: codehost.clientId, client_secret: codehost.clientSecret });

    const token = await api.get(`/api/connections/${id}/access-token`);
    expect(token.status, token.text).to.equal(200);
    expect(token.body.access_token).to.match(/^gho_/);
    expect(codehost.isLive(token.body.access_token)).to.equal(true);

    const listed = await api.get('/api/connections');
    expect(listed.body.connections).to.have.length(1);
    expect(listed.body.connections[0]).to.include({ connection_id: id, type: 'codehost' });
    expect(listed.body.connections[0].updated_at).to.be.a('string');
    expect(listed.body).to.not.have.property('pagination');
    for (const res of [created, listed]) expect(res.text).to.not.include(token.body.access_token);
    expect((await api.get('/api/connections?type=github')).body.connections).to.have.length(1);
    expect((await api.get('/api/connections?type=other')).body.connections).to.have.length(0);

    const row = await ds.getRepository(Connection).findOneByOrFail({ connection_id: id });
    expect(row.access_token_encrypted.includes(Buffer.from(token.body.access_token))).to.equal(false);
    expect(box.open(row.access_token_encrypted, `connection:${id}:access`)).to.equal(token.body.access_token);
    expect(row.expires_at).to.equal(null); // GitHub OAuth app tokens do not expire

    // The clients' words: type `github`, credentials `{github: {auth_code}}`; stored as `codehost`.
    const github = await api.post('/api/connections', {
      type: 'github',
      credentials: { github: { auth_code: codehost.issueCode() } },
    });
    expect(github.status, github.text).to.equal(201);
    expect(github.body).to.include({ type: 'codehost', name: 'codehost' });

    expect((await api.delete(`/api/connections/${id}`)).status).to.equal(204);
    expect((await api.get(`/api/connections/${id}/access-token`)).status).to.equal(404);
    expect((await api.delete(`/api/connections/${id}`)).status).to.equal(404);
  });

  it('refuses a bad or reused code with the code host error, and bad bodies', async () => {
    const { codehost } = getStack();
    const api = as((await newTenant('conn-bad')).key);
    const body = (auth_code: string) => ({ type: 'codehost', credentials: { codehost: { auth_code } } });
    const bad = await api.post('/api/connections', body('not-a-code'));
    expect(bad.status, bad.text).to.equal(400);
    expect(bad.body.type).to.equal('ValidationError');
    expect(bad.body.errors[0]).to.deep.equal({
      message:
        'The code host refused the authorization code: bad_verification_code: The code passed is incorrect or expired.',
      path: '/body/credentials/codehost/auth_code',
    });
    const code = codehost.issueCode();
    expect((await api.post('/api/connections', body(code))).status).to.equal(201);
    const reused = await api.post('/api/connections', body(code));
    expect(reused.status).to.equal(400);
    expect(reused.body.errors[0].message).to.include('bad_verification_code');
    expect((await api.get('/api/connections')).body.connections).to.have.length(1);

    for (const [what, b, path] of [
      ['another type', { type: 'slack', credentials: { codehost: { auth_code: 'x' } } }, '/body/type'],
      ['no credentials', { type: 'codehost' }, '/body/credentials'],
      [
        'two members',
        { type: 'codehost', credentials: { codehost: { auth_code: 'x' }, github: { auth_code: 'x' } } },
        '/body/credentials',
      ],
      ['no auth_code', { type: 'codehost', credentials: { codehost: {} } }, '/body/credentials/codehost/auth_code'],
      ['empty name', { type: 'codehost', name: '', credentials: { codehost: { auth_code: 'x' } } }, '/body/name'],
    ] as const) {
      const res = await api.post('/api/connections', b);
      expect(res.status, `${what}: ${res.text}`).to.equal(400);
      expect(
        res.body.errors.map((e: { path: string }) => e.path),
        what,
      ).to.include(path);
    }
  });

  it('refreshes an expiring token when it is read, and says so when the code host refuses', async () => {
    const { codehost, ds, box } = getStack();
    const api = as((await newTenant('conn-refresh')).key);
    const created = await api.post('/api/connections', {
      type: 'codehost',
      credentials: { codehost: { auth_code: codehost.issueCode({ expiresIn: 28_800 }) } },
    });
    const id = created.body.connection_id;
    const first = (await api.get(`/api/connections/${id}/access-token`)).body.access_token;
    expect((await api.get(`/api/connections/${id}/access-token`)).body.access_token, 'still fresh').to.equal(first);
    const before = codehost.tokenRequests.length;

    // Eight hours later (the expiry moved into the past): the next read refreshes, once, and rotates.
    await ds.query(`UPDATE connections SET expires_at = now() - interval '1 minute' WHERE connection_id = $1`, [id]);
    codehost.expire(first);
    const second = await api.get(`/api/connections/${id}/access-token`);
    expect(second.status, second.text).to.equal(200);
    expect(second.body.access_token).to.not.equal(first);
    expect(codehost.isLive(second.body.access_token)).to.equal(true);
    expect(codehost.tokenRequests.length).to.equal(before + 1);
    expect(codehost.tokenRequests.at(-1)!.fields).to.include({
      grant_type: 'refresh_token',
      client_id: codehost.clientId,
      client_secret: codehost.clientSecret,
    });
    expect((await api.get(`/api/connections/${id}/access-token`)).body.access_token).to.equal(second.body.access_token);
    expect(codehost.tokenRequests.length, 'no second refresh').to.equal(before + 1);
    const row = await ds.getRepository(Connection).findOneByOrFail({ connection_id: id });
    expect(row.expires_at!.getTime()).to.be.greaterThan(Date.now() + 7 * 3600_000);

    // A refresh token the code host no longer accepts: 409, connect again.
    await ds.query(
      `UPDATE connections SET expires_at = now() - interval '1 minute', refresh_token_encrypted = $2 WHERE connection_id = $1`,
      [id, box.seal('ghr_revoked', `connection:${id}:refresh`)],
    );
    const refused = await api.get(`/api/connections/${id}/access-token`);
    expect(refused.status, refused.text).to.equal(409);
    expect(refused.body.errors[0].message).to.include('bad_refresh_token');
    // Expired with no refresh token at all.
    await ds.query(`UPDATE connections SET refresh_token_encrypted = NULL WHERE connection_id = $1`, [id]);
    const dead = await api.get(`/api/connections/${id}/access-token`);
    expect(dead.status).to.equal(409);
    expect(dead.body.errors[0].message).to.match(/expired and cannot be refreshed: create it again/);
  });

  it('cannot be deleted while a structure clones with it (409 naming it); names only its own organization', async () => {
    const { codehost } = getStack();
    const t = await newTenant('conn-use');
    const api = as(t.key);
    const created = await api.post('/api/connections', {
      type: 'codehost',
      credentials: { codehost: { auth_code: codehost.issueCode() } },
    });
    const id = created.body.connection_id;
    const code = { codehost: { owner: 'someone', name: 'private', push: { branch: 'main' }, connection_id: id } };
    const structure = await api.post('/api/structures', { name: 'uses-it', code });
    expect(structure.status, structure.text).to.equal(201);
    expect(structure.body.code.codehost.connection_id).to.equal(id);

    const refused = await api.delete(`/api/connections/${id}`);
    expect(refused.status, refused.text).to.equal(409);
    expect(refused.body.type).to.equal('ConflictError');
    expect(refused.body.errors[0].message).to.include(`structure uses-it (${structure.body.structure_id})`);

    // Another organization can neither name it nor see it.
    const other = as((await newTenant('conn-other')).key);
    const borrowed = await other.post('/api/structures', { name: 'borrow', code });
    expect(borrowed.status, borrowed.text).to.equal(409);
    expect(borrowed.body.errors[0]).to.include({ path: '/body/code/codehost/connection_id' });
    expect((await other.get(`/api/connections/${id}/access-token`)).status).to.equal(404);
    expect((await other.delete(`/api/connections/${id}`)).status).to.equal(404);
    expect((await other.get('/api/connections')).body.connections).to.deep.equal([]);
    const { connection_id: _named, ...location } = code.codehost;
    const own = await other.post('/api/structures', { name: 'own', code: { codehost: location } });
    const namedByDeployment = await other.post(`/api/structures/${own.body.structure_id}/deployments`, {
      code_source: { codehost: { connection_id: id } },
    });
    expect(namedByDeployment.status, namedByDeployment.text).to.equal(409);
    expect(namedByDeployment.body.errors[0]).to.include({ path: '/body/code_source/codehost/connection_id' });

    const moved = await api.patch(`/api/structures/${structure.body.structure_id}`, { code: { default: {} } });
    expect(moved.status, moved.text).to.equal(200);
    expect((await api.delete(`/api/connections/${id}`)).status).to.equal(204);
  });

  it('answers a clear 503 where connections are not configured, or the code host refuses our OAuth app', async () => {
    const s = getStack();
    const api = await startApi(s.env.client, 0, { ...s.config, codehostOAuth: undefined });
    try {
      const t = await newTenant('conn-off');
      const res = await as(t.key, api.baseUrl).post('/api/connections', {
        type: 'codehost',
        credentials: { codehost: { auth_code: s.codehost.issueCode() } },
      });
      expect(res.status, res.text).to.equal(503);
      expect(res.body).to.deep.equal({
        type: 'ServiceUnavailableError',
        errors: [
          {
            message:
              'Connections are not configured on this installation: the operator sets CODEHOST_OAUTH_CLIENT_ID and ' +
              'CODEHOST_OAUTH_CLIENT_SECRET (docs/connections-and-billing.md)',
          },
        ],
      });
      expect((await as(t.key, api.baseUrl).get('/api/connections')).status).to.equal(200);
    } finally {
      await api.close();
    }
    // An app the code host does not know is the operator's problem: a 503, not the caller's 400.
    const wrongApp = { ...s.config.codehostOAuth!, clientSecret: 'not-the-secret' };
    const misconfigured = await startApi(s.env.client, 0, { ...s.config, codehostOAuth: wrongApp });
    try {
      const t = await newTenant('conn-wrong-app');
      const res = await as(t.key, misconfigured.baseUrl).post('/api/connections', {
        type: 'codehost',
        credentials: { codehost: { auth_code: s.codehost.issueCode() } },
      });
      expect(res.status, res.text).to.equal(503);
      expect(res.body.errors[0].message).to.include("refused this installation's OAuth app");
      expect(res.body.errors[0].message).to.include('incorrect_client_credentials');
    } finally {
      await misconfigured.close();
    }
  });
});
