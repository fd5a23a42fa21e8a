// git sources are hostile input (src/runtime/source/git.ts): cloned inside the sandbox as the build's uid,
// within GIT_MAX_MB, and the tree checked as an archive's is. On a worker of its own whose GIT_MAX_MB is 1.
import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { createCodeResource } from '../../src/services/code/code-resources';
import { createWorker } from '../../src/worker/create-worker';
import { config, waitForDeployment } from '../fixtures/projects';
import { getStack, newTenant } from '../harness/stack';
import { ownerCaller } from '../harness/people';

/** A bare repository under the stack's code host from a work tree that `plant` fills (links included). */
function repository(owner: string, name: string, plant: (work: string) => void): void {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'tarmac-repo-'));
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd: work });
  try {
    git('init', '--quiet', '--initial-branch=main');
    fs.writeFileSync(path.join(work, 'structure_config.yaml'), config('nodejs', '  main_file: main.js\n'));
    fs.writeFileSync(path.join(work, 'main.js'), 'console.log("hi")\n');
    plant(work);
    git('add', '--all');
    git('commit', '--quiet', '-m', 'one');
    const bare = path.join(getStack().codehostDir, owner, `${name}.git`);
    fs.mkdirSync(path.dirname(bare), { recursive: true });
    execFileSync('git', ['clone', '--quiet', '--bare', work, bare]);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

describe('git sources in the sandbox', function () {
  this.timeout(180_000);

  it('refuses a link out of the tree and a repository over GIT_MAX_MB, naming why; clones a sound one', async () => {
    const s = getStack();
    const t = await newTenant('git-sandbox');
    const caller = ownerCaller(t);
    const owner = `g${randomUUID().slice(0, 8)}`;
    repository(owner, 'sound', (work) => fs.symlinkSync('main.js', path.join(work, 'alias.js')));
    repository(owner, 'link-out', (work) => fs.symlinkSync('/etc/shadow', path.join(work, 'shadow')));
    repository(owner, 'link-up', (work) => fs.symlinkSync('../../..', path.join(work, 'up')));
    repository(owner, 'huge', (work) => fs.writeFileSync(path.join(work, 'blob.bin'), randomBytes(3 * 1024 * 1024)));

    const taskQueue = `tarmac-test-git-${randomUUID()}`;
    const cfg = {
      ...s.config,
      git: { maxBytes: 1024 * 1024, timeSeconds: 60 },
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
    const deploy = async (name: string) => {
      const structure = await createCodeResource(deps, caller, 'structure', {
        name,
        code: { codehost: { owner, name, push: { branch: 'main' } } },
      });
      return waitForDeployment(t.key, structure.latest_deployment_id!);
    };
    await worker.runUntil(async () => {
      const sound = await deploy('sound');
      expect(sound.status, JSON.stringify(sound.status_detail)).to.equal('SUCCEEDED');

      for (const [name, pattern] of [
        ['link-out', /"shadow" is a link pointing outside the repository/],
        ['link-up', /"up" is a link pointing outside the repository/],
      ] as const) {
        const refused = await deploy(name);
        expect(refused.status, name).to.equal('FAILED');
        expect(refused.status_detail.reason, name).to.equal('UnsafeRepository');
        expect(refused.status_detail.message, name).to.match(pattern);
      }

      const huge = await deploy('huge');
      expect(huge.status).to.equal('FAILED');
      expect(huge.status_detail.reason).to.equal('RepositoryTooLarge');
      expect(huge.status_detail.message).to.equal('The repository takes more than 1 MB on disk (GIT_MAX_MB)');
      const builds = fs.readdirSync(s.config.buildDir);
      for (const d of [huge, sound]) expect(builds.includes(d.deployment_id)).to.equal(d === sound);
    });
  });
});
