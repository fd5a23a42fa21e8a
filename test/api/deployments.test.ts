// Deployments through the api against the real stack: default projects, python3 and nodejs projects
// from bucket archives, git repositories, reuse and `force`, and the ways a deployment fails.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { readManifest } from '../../src/runtime/manifest';
import { as } from '../harness/client';
import { getStack, newTenant } from '../harness/stack';
import {
  config,
  entriesOf,
  gitRepository,
  makeArchive,
  upload,
  uploadToNewBucket,
  waitForDeployment,
} from '../fixtures/projects';

async function buildOf(deploymentId: string) {
  const row = await getStack().ds.query(`SELECT build_path FROM deployments WHERE deployment_id = $1`, [deploymentId]);
  return readManifest(row[0].build_path);
}

describe('deployments', function () {
  this.timeout(180_000);

  it('deploys the default project of a structure created without code', async () => {
    const t = await newTenant('deploy-default');
    const api = as(t.key);
    const created = await api.post('/api/structures', { name: 'plain' });
    expect(created.status, created.text).to.equal(201);
    expect(created.body.code).to.deep.equal({ default: {} });
    const deployment = await waitForDeployment(t.key, created.body.latest_deployment_id);
    expect(deployment, JSON.stringify(deployment)).to.include({
      status: 'SUCCEEDED',
      structure_id: created.body.structure_id,
    });
    expect(deployment.code_source).to.deep.equal({ default: {} });
    expect(deployment.completed_at).to.be.a('string');
    expect(deployment.status_detail).to.include({ reason: 'Deployed', runtime: 'python3' });

    const manifest = await buildOf(deployment.deployment_id);
    expect(manifest.interpreter).to.equal(
      path.join(getStack().config.buildDir, deployment.deployment_id, 'venv', 'bin', 'python'),
    );
    expect(manifest.mainFile).to.equal('structure.py');
    const out = execFileSync(manifest.interpreter, [manifest.mainFile, 'a', 'b c'], {
      cwd: manifest.workDir,
      encoding: 'utf8',
      env: {},
    });
    expect(out).to.include("Arguments: ['a', 'b c']");
  });

  it('runs the default structure: it prints its arguments and posts them back as its output', async () => {
    const t = await newTenant('deploy-default-run');
    const api = as(t.key);
    const created = await api.post('/api/structures', { name: 'plain' });
    expect((await waitForDeployment(t.key, created.body.latest_deployment_id)).status).to.equal('SUCCEEDED');
    const run = await api.post(`/api/structures/${created.body.structure_id}/runs`, { args: ['hello', 'world'] });
    expect(run.status, run.text).to.equal(201);
    let done: any;
    for (let i = 0; i < 300 && !['SUCCEEDED', 'FAILED', 'ERROR'].includes(done?.status); i++) {
      if (i) await new Promise((r) => setTimeout(r, 100));
      done = (await api.get(`/api/structure-runs/${run.body.structure_run_id}`)).body;
    }
    expect(done, JSON.stringify(done)).to.include({
      status: 'SUCCEEDED',
      deployment_id: created.body.latest_deployment_id,
    });
    expect(done.output).to.deep.equal({ type: 'TextArtifact', value: 'hello world' });
    const logs = await api.get(`/api/structure-runs/${run.body.structure_run_id}/logs`);
    expect(logs.body.logs).to.deep.equal(["Hello from the default structure. Arguments: ['hello', 'world']"]);
  });

  it('deploys a python3 structure from a zip in a bucket, installing its requirements from PyPI', async () => {
    const t = await newTenant('deploy-python');
    const zip = makeArchive(
      'zip',
      entriesOf({
        'app/structure_config.yaml': config(
          'python3',
          '  main_file: main.py\n',
          '  requirements_file: requirements.txt\n',
        ),
        'app/requirements.txt': 'six==1.17.0\n',
        'app/main.py': 'import sys, six\nprint("six", six.__version__, sys.argv[1:])\n',
      }),
    );
    const bucketId = await uploadToNewBucket(t.key, 'src/project.zip', zip);
    const started = Date.now();
    const created = await as(t.key).post('/api/structures', {
      name: 'py',
      code: { data_lake: { bucket_id: bucketId, asset_path: 'src/project.zip' } },
      structure_config_file: 'app/structure_config.yaml',
    });
    expect(created.status, created.text).to.equal(201);
    const deployment = await waitForDeployment(t.key, created.body.latest_deployment_id);
    expect(deployment.status, JSON.stringify(deployment.status_detail)).to.equal('SUCCEEDED');
    console.log(`      (python3 build with pip install: ${Date.now() - started} ms)`);
    expect(deployment.code_source).to.deep.equal({ data_lake: { bucket_id: bucketId, asset_path: 'src/project.zip' } });
    expect(deployment.status_detail.runtime_version).to.equal('3.12');

    const manifest = await buildOf(deployment.deployment_id);
    expect(manifest).to.include({ runtime: 'python3', mainFile: 'main.py' });
    expect(manifest.workDir).to.match(/\/src\/app$/);
    const out = execFileSync(manifest.interpreter, [manifest.mainFile, 'x'], {
      cwd: manifest.workDir,
      encoding: 'utf8',
      env: {},
    });
    expect(out.trim()).to.equal("six 1.17.0 ['x']");
  });

  it('deploys a nodejs structure from a .tar.gz; reuses it for the same asset, builds again with force or new bytes', async () => {
    const t = await newTenant('deploy-node');
    const api = as(t.key);
    const project = (greeting: string) =>
      makeArchive(
        'tar.gz',
        entriesOf({
          'structure_config.yaml': config('nodejs', '  main_file: main.js\n', '  post_build_install_script: post.sh\n'),
          'package.json': JSON.stringify({ name: 'demo', version: '1.0.0', private: true }),
          'post.sh': 'echo built > built.txt\n',
          'main.js': `console.log(${JSON.stringify(greeting)}, process.argv.slice(2).join(' '));\n`,
        }),
      );
    const bucketId = await uploadToNewBucket(t.key, 'node.tgz', project('hello'));
    const created = await api.post('/api/structures', {
      name: 'node',
      code: { data_lake: { bucket_id: bucketId, asset_path: 'node.tgz' } },
    });
    const first = await waitForDeployment(t.key, created.body.latest_deployment_id);
    expect(first.status, JSON.stringify(first.status_detail)).to.equal('SUCCEEDED');
    const manifest = await buildOf(first.deployment_id);
    expect(manifest).to.include({ runtime: 'nodejs', interpreter: process.execPath, mainFile: 'main.js' });
    expect(fs.readFileSync(path.join(manifest.workDir, 'built.txt'), 'utf8').trim()).to.equal('built');
    expect(
      execFileSync(manifest.interpreter, [manifest.mainFile, 'world'], {
        cwd: manifest.workDir,
        encoding: 'utf8',
      }).trim(),
    ).to.equal('hello world');

    const path_ = `/api/structures/${created.body.structure_id}/deployments`;
    const again = await api.post(path_, {});
    expect(again.status).to.equal(202);
    expect(again.body.deployment_id, 'same source: the existing deployment').to.equal(first.deployment_id);

    const forced = await api.post(path_, { force: true });
    expect(forced.status).to.equal(202);
    expect(forced.body.deployment_id).to.not.equal(first.deployment_id);
    expect(forced.body.status).to.equal('QUEUED');
    expect((await waitForDeployment(t.key, forced.body.deployment_id)).status).to.equal('SUCCEEDED');

    await upload(t.key, bucketId, 'node.tgz', project('bonjour'));
    const changed = await api.post(path_);
    expect(changed.body.deployment_id).to.not.be.oneOf([first.deployment_id, forced.body.deployment_id]);
    const third = await waitForDeployment(t.key, changed.body.deployment_id);
    const m3 = await buildOf(third.deployment_id);
    expect(execFileSync(m3.interpreter, [m3.mainFile, 'monde'], { cwd: m3.workDir, encoding: 'utf8' }).trim()).to.equal(
      'bonjour monde',
    );
    // The first build is untouched by later ones (immutable build directories).
    expect(
      execFileSync(manifest.interpreter, [manifest.mainFile], { cwd: manifest.workDir, encoding: 'utf8' }).trim(),
    ).to.equal('hello');

    const structure = await api.get(`/api/structures/${created.body.structure_id}`);
    expect(structure.body.latest_deployment_id).to.equal(changed.body.deployment_id);
    const succeeded = await api.get(`${path_}?status=SUCCEEDED`);
    expect(succeeded.body.deployments.map((d: any) => d.deployment_id)).to.deep.equal([
      changed.body.deployment_id,
      forced.body.deployment_id,
      first.deployment_id,
    ]);
  });

  it('deploys from a git repository: branch head, a tag, a given commit; reuses a deployed commit unless forced', async () => {
    const t = await newTenant('deploy-git');
    const api = as(t.key);
    const owner = `o-${t.organizationId.slice(0, 8)}`;
    const version = (n: number) => ({
      'structure_config.yaml': config('python3', '  main_file: src/main.py\n  run_as_module: false\n'),
      'src/main.py': `print("version ${n}")\n`,
    });
    const [first, second] = gitRepository(owner, 'repo', [version(1), version(2)], 'v1');
    // Answered in the interface's word and, beside it, the provider's (the generated client parses `github`).
    const hosted = (sha: string) => ({ codehost: { commit_sha: sha }, github: { commit_sha: sha } });
    const created = await api.post('/api/structures', {
      name: 'git',
      code: { codehost: { owner, name: 'repo', push: { branch: 'main' } } },
    });
    const head = await waitForDeployment(t.key, created.body.latest_deployment_id);
    expect(head.status, JSON.stringify(head.status_detail)).to.equal('SUCCEEDED');
    expect(head.code_source).to.deep.equal(hosted(second));
    const run = async (deploymentId: string) => {
      const m = await buildOf(deploymentId);
      expect(fs.existsSync(path.join(m.workDir, '.git')), 'no git metadata in builds').to.equal(false);
      return execFileSync(m.interpreter, [m.mainFile], { cwd: m.workDir, encoding: 'utf8', env: {} }).trim();
    };
    expect(await run(head.deployment_id)).to.equal('version 2');

    const deployments = `/api/structures/${created.body.structure_id}/deployments`;
    const token = `tok-${Math.random().toString(36).slice(2)}`;
    // The client's word for the code host, `github`, is accepted as `codehost`.
    const pinned = await api.post(deployments, { code_source: { github: { commit_sha: first, access_token: token } } });
    expect(pinned.status, pinned.text).to.equal(202);
    expect(pinned.body.code_source).to.deep.equal(hosted(first));
    const pinnedDone = await waitForDeployment(t.key, pinned.body.deployment_id);
    expect(pinnedDone.code_source).to.deep.equal(hosted(first));
    expect(await run(pinned.body.deployment_id)).to.equal('version 1');

    // The token is nowhere at rest: not in the row, not in plain text in the workflow history.
    const rows = await getStack().ds.query(
      `SELECT to_jsonb(d)::text AS row FROM deployments d WHERE resource_id = $1`,
      [created.body.structure_id],
    );
    for (const r of rows) expect(r.row).to.not.include(token);
    const history = await getStack()
      .env.client.workflow.getHandle(`deployment-${pinned.body.deployment_id}`)
      .fetchHistory();
    const input = Buffer.from(
      history.events![0].workflowExecutionStartedEventAttributes!.input!.payloads![0].data!,
    ).toString('utf8');
    expect(input).to.include('sealedAccessToken').and.not.include(token);

    const same = await api.post(deployments, { code_source: { codehost: { commit_sha: second } } });
    expect(same.body.deployment_id, 'the newest non-failed deployment is of another commit: build').to.not.equal(
      head.deployment_id,
    );
    await waitForDeployment(t.key, same.body.deployment_id);
    const reused = await api.post(deployments, { code_source: { codehost: { commit_sha: second } } });
    expect(reused.status).to.equal(202);
    expect(reused.body.deployment_id, 'same commit as the newest deployment: reused').to.equal(same.body.deployment_id);
    const forced = await api.post(deployments, { code_source: { codehost: { commit_sha: second } }, force: true });
    expect(forced.body.deployment_id).to.not.equal(same.body.deployment_id);
    await waitForDeployment(t.key, forced.body.deployment_id);

    const location = { owner, name: 'repo', push: { branch: 'main', tag: 'v1' } };
    const tagged = await api.patch(`/api/structures/${created.body.structure_id}`, { code: { github: location } });
    expect(tagged.body.code).to.deep.equal({ codehost: location, github: location });
    const fromTag = await waitForDeployment(t.key, tagged.body.latest_deployment_id);
    expect(fromTag.code_source).to.deep.equal(hosted(first));

    // Lists: newest first, status filter as A,B or repeated, pagination.
    const all = await api.get(`${deployments}?page_size=2`);
    expect(all.body.pagination).to.include({ total_count: 5, total_pages: 3, next_page: 2 });
    expect(all.body.deployments[0].deployment_id).to.equal(tagged.body.latest_deployment_id);
    for (const query of ['status=SUCCEEDED,FAILED', 'status=SUCCEEDED&status=FAILED']) {
      const filtered = await api.get(`${deployments}?${query}`);
      expect(filtered.status, filtered.text).to.equal(200);
      expect(filtered.body.deployments).to.have.length(5);
    }
    expect((await api.get(`${deployments}?status=FAILED,ERROR`)).body.deployments).to.deep.equal([]);
    expect((await api.get(`${deployments}?status=DONE`)).status).to.equal(400);
  });

  it('deploys functions and tools; code_source.codehost is refused for other code', async () => {
    const t = await newTenant('deploy-kinds');
    const api = as(t.key);
    for (const kind of ['function', 'tool']) {
      const created = await api.post(`/api/${kind}s`, { name: kind });
      const done = await waitForDeployment(t.key, created.body.latest_deployment_id);
      expect(done, JSON.stringify(done)).to.include({
        status: 'SUCCEEDED',
        [`${kind}_id`]: created.body[`${kind}_id`],
      });
      expect(done).to.not.have.property('structure_id');
      const manifest = await buildOf(done.deployment_id);
      expect(manifest.mainFile).to.equal(`${kind}.py`);
      if (kind === 'tool')
        expect(manifest.tool).to.deep.equal({ initToolFile: 'tool.py', initToolFunction: 'init_tool' });
      const list = await api.get(`/api/${kind}s/${created.body[`${kind}_id`]}/deployments?status=SUCCEEDED`);
      expect(list.body.deployments.map((d: any) => d.deployment_id)).to.deep.equal([done.deployment_id]);
      const refused = await api.post(`/api/${kind}s/${created.body[`${kind}_id`]}/deployments`, {
        code_source: { codehost: { commit_sha: 'abc1234' } },
      });
      expect(refused.status).to.equal(409);
      expect(refused.body.errors[0].message).to.match(/code_source.codehost applies only to/);
      const tooLong = await api.post(`/api/${kind}s/${created.body[`${kind}_id`]}/deployments`, {
        code_source: { codehost: { access_token: 'x'.repeat(1001) } },
      });
      expect(tooLong.status).to.equal(400);
    }
  });
});
