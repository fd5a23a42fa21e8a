// A deployment clones a private repository with the token of the connection its code location names: the
// real deployment workflow and activities on a worker of their own whose CODEHOST_BASE_URL is the stack's local
// code host, which serves git over HTTP (the real `git http-backend`) only to its live tokens.
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { createCodeResource } from '../../src/services/code/code-resources';
import { requestDeployment } from '../../src/services/code/deployments';
import { createWorker } from '../../src/worker/create-worker';
import { config, gitRepository, waitForDeployment } from '../fixtures/projects';
import { as } from '../harness/client';
import { getStack, newTenant } from '../harness/stack';
import { ownerCaller } from '../harness/people';

describe('private repositories through a connection', function () {
  this.timeout(180_000);

  it('clones with the connection token (refreshed when expired), never writing it down; fails clearly without', async () => {
    const s = getStack();
    const { codehost } = s;
    const t = await newTenant('clone');
    const caller = ownerCaller(t);
    const owner = `o${randomUUID().slice(0, 8)}`;
    const [sha] = gitRepository(owner, 'app', [
      { 'structure_config.yaml': config('nodejs', '  main_file: main.js\n'), 'main.js': 'console.log("private")\n' },
    ]);
    const conn = await as(t.key).post('/api/connections', {
      type: 'codehost',
      credentials: { codehost: { auth_code: codehost.issueCode({ expiresIn: 28_800 }) } },
    });
    expect(conn.status, conn.text).to.equal(201);
    const connectionId = conn.body.connection_id;
    const firstToken = (await as(t.key).get(`/api/connections/${connectionId}/access-token`)).body.access_token;

    const taskQueue = `tarmac-test-clone-${randomUUID()}`;
    const cfg = {
      ...s.config,
      codehostBaseUrl: codehost.baseUrl,
      temporal: { ...s.config.temporal, taskQueue },
    };
    const deps = { ds: s.ds, temporal: s.env.client, config: cfg, box: s.box };
    const worker = await createWorker({
      connection: s.env.nativeConnection,
      namespace: s.env.namespace ?? 'default',
      taskQueue,
      deps: { ...s.activityDeps, config: cfg },
      workflowBundle: s.workflowBundle,
      shutdownGraceTime: '1 second',
    });
    const repoPath = `/${owner}/app.git/`;
    const gitSince = () => {
      const since = codehost.gitRequests.length;
      return () => codehost.gitRequests.slice(since).filter((r) => r.path.startsWith(repoPath));
    };
    const location = { owner, name: 'app', push: { branch: 'main' } };

    await worker.runUntil(async () => {
      // With the connection: cloned with its token, every git request authorized.
      let seen = gitSince();
      const structure = await createCodeResource(deps, caller, 'structure', {
        name: 'private',
        code: { codehost: { ...location, connection_id: connectionId } },
      });
      const deployed = await waitForDeployment(t.key, structure.latest_deployment_id!);
      expect(deployed.status, JSON.stringify(deployed.status_detail)).to.equal('SUCCEEDED');
      expect(deployed.code_source.codehost).to.deep.equal({ commit_sha: sha });
      expect(seen().length).to.be.greaterThan(0);
      expect(seen().every((r) => r.authorized)).to.equal(true);
      // The token is nowhere in the build (git's config travelled in the environment; .git is gone).
      const [{ build_path: buildPath }] = await s.ds.query(
        `SELECT build_path FROM deployments WHERE deployment_id = $1`,
        [deployed.deployment_id],
      );
      const grep = spawnSync('grep', ['-rlF', '--', firstToken, buildPath], { encoding: 'utf8' });
      expect(grep.status, `grep found the token in ${grep.stdout}`).to.equal(1);

      // The token expired meanwhile: the deployment refreshes it first and clones with the new one.
      await s.ds.query(`UPDATE connections SET expires_at = now() - interval '1 minute' WHERE connection_id = $1`, [
        connectionId,
      ]);
      codehost.expire(firstToken);
      seen = gitSince();
      const redeployed = await requestDeployment(deps, caller, structure, { force: true });
      const second = await waitForDeployment(t.key, redeployed.deployment.deployment_id);
      expect(second.status, JSON.stringify(second.status_detail)).to.equal('SUCCEEDED');
      expect(seen().every((r) => r.authorized)).to.equal(true);
      const newToken = (await as(t.key).get(`/api/connections/${connectionId}/access-token`)).body.access_token;
      expect(newToken).to.not.equal(firstToken);
      expect(codehost.isLive(newToken)).to.equal(true);

      // Without a connection the code host refuses the clone.
      seen = gitSince();
      const anonymous = await createCodeResource(deps, caller, 'structure', {
        name: 'anon',
        code: { codehost: location },
      });
      const refused = await waitForDeployment(t.key, anonymous.latest_deployment_id!);
      expect(refused.status).to.equal('FAILED');
      expect(refused.status_detail.reason).to.equal('CloneFailed');
      expect(seen().some((r) => !r.authorized)).to.equal(true);
      // The same structure, its deployment naming the connection (code_source.codehost.connection_id).
      seen = gitSince();
      const named = await requestDeployment(deps, caller, anonymous, {
        code_source: { codehost: { connection_id: connectionId } },
      });
      const withConnection = await waitForDeployment(t.key, named.deployment.deployment_id);
      expect(withConnection.status, JSON.stringify(withConnection.status_detail)).to.equal('SUCCEEDED');
      expect(seen().every((r) => r.authorized)).to.equal(true);

      // A connection that cannot give a token any more fails the deployment, saying which and why.
      await s.ds.query(
        `UPDATE connections SET expires_at = now() - interval '1 minute', refresh_token_encrypted = NULL WHERE connection_id = $1`,
        [connectionId],
      );
      const stale = await requestDeployment(deps, caller, structure, { force: true });
      const failed = await waitForDeployment(t.key, stale.deployment.deployment_id);
      expect(failed.status).to.equal('FAILED');
      expect(failed.status_detail).to.deep.equal({
        reason: 'ConnectionUnavailable',
        message: `Connection ${connectionId}: The token of connection ${connectionId} expired and cannot be refreshed: create it again`,
      });
      for (const d of [deployed, second, refused, failed]) expect(JSON.stringify(d)).to.not.include('gho_');
    });
  });
});
