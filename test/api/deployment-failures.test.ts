// How deployments fail: the user's project (FAILED with reason, message and the build output's tail) and
// archives that try to write or point outside their directory (refused before anything is built).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { assetBlobKey } from '../../src/blobs/keys';
import { as } from '../harness/client';
import { getStack, newTenant } from '../harness/stack';
import {
  ArchiveEntry,
  config,
  entriesOf,
  makeArchive,
  uploadToNewBucket,
  waitForDeployment,
} from '../fixtures/projects';

const nodeMain = { 'main.js': 'console.log("hi")\n' };

/** Deploys `bytes` uploaded as `assetName` and answers the finished deployment. */
async function deploy(label: string, assetName: string, bytes: Buffer, configFile?: string) {
  const t = await newTenant(label);
  const bucketId = await uploadToNewBucket(t.key, assetName, bytes);
  const created = await as(t.key).post('/api/structures', {
    name: label,
    code: { data_lake: { bucket_id: bucketId, asset_path: assetName } },
    ...(configFile ? { structure_config_file: configFile } : {}),
  });
  expect(created.status, created.text).to.equal(201);
  const done = await waitForDeployment(t.key, created.body.latest_deployment_id);
  const buildPath = path.join(getStack().config.buildDir, done.deployment_id);
  expect(fs.existsSync(buildPath), 'a failed build leaves nothing behind').to.equal(done.status === 'SUCCEEDED');
  return done;
}

describe('deployment failures', function () {
  this.timeout(120_000);

  const failures: Array<[string, Record<string, string>, string, RegExp]> = [
    ['invalid YAML', { 'structure_config.yaml': 'version: [1.0\n', ...nodeMain }, 'InvalidConfig', /not valid YAML/],
    [
      'an unsupported version',
      { 'structure_config.yaml': config('nodejs', '  main_file: main.js\n').replace('1.0', '2.0'), ...nodeMain },
      'InvalidConfig',
      /version 2 is not supported/,
    ],
    [
      'an unknown runtime',
      {
        'structure_config.yaml': config('nodejs', '  main_file: main.js\n').replace('runtime: nodejs', 'runtime: ruby'),
        ...nodeMain,
      },
      'InvalidConfig',
      /runtime/,
    ],
    [
      'no main_file',
      { 'structure_config.yaml': config('nodejs', '  run_as_module: false\n'), ...nodeMain },
      'InvalidConfig',
      /run\.main_file` is required/,
    ],
    [
      'a main file outside the source',
      { 'structure_config.yaml': config('nodejs', '  main_file: ../../main.js\n'), ...nodeMain },
      'InvalidConfig',
      /outside the source/,
    ],
    [
      'a missing main file',
      { 'structure_config.yaml': config('nodejs', '  main_file: missing.js\n'), ...nodeMain },
      'FileNotFound',
      /run\.main_file "missing\.js" was not found/,
    ],
    [
      'a missing requirements file',
      {
        'structure_config.yaml': config('python3', '  main_file: main.py\n', '  requirements_file: nope.txt\n'),
        'main.py': '',
      },
      'FileNotFound',
      /requirements_file/,
    ],
    ['no config file', nodeMain, 'ConfigNotFound', /structure_config\.yaml/],
    [
      'a failing build script',
      {
        'structure_config.yaml': config(
          'nodejs',
          '  main_file: main.js\n',
          '  pre_build_install_script: /scripts/pre.sh\n',
        ),
        'scripts/pre.sh': 'echo "compiling the frobnicator"\necho "frobnicator broke" >&2\nexit 3\n',
        ...nodeMain,
      },
      'ScriptFailed',
      /pre-build script pre\.sh exited with code 3/,
    ],
  ];
  for (const [what, files, reason, message] of failures) {
    it(`ends FAILED (${reason}) for ${what}`, async () => {
      const done = await deploy(`fail-${reason}`, 'project.zip', makeArchive('zip', entriesOf(files)));
      expect(done.status, JSON.stringify(done)).to.equal('FAILED');
      expect(done.status_detail.reason).to.equal(reason);
      expect(done.status_detail.message).to.match(message);
      expect(done.status_detail.build_output_tail).to.be.a('string');
      expect(done.completed_at).to.be.a('string');
      if (reason === 'ScriptFailed')
        expect(done.status_detail.build_output_tail)
          .to.include('compiling the frobnicator')
          .and.include('frobnicator broke');
    });
  }

  it('ends FAILED (InstallFailed) when npm install fails, with npm output in the tail', async () => {
    const done = await deploy(
      'fail-npm',
      'p.tgz',
      makeArchive(
        'tar.gz',
        entriesOf({
          'structure_config.yaml': config('nodejs', '  main_file: main.js\n'),
          'package.json': '{"name": "x", "version": "1.0.0", "dependencies": {"dep": "file:./missing.tgz"}}',
          ...nodeMain,
        }),
      ),
    );
    expect(done.status_detail).to.include({ reason: 'InstallFailed' });
    expect(done.status_detail.message).to.match(/^npm install exited with code/);
    expect(done.status_detail.build_output_tail).to.match(/npm/i);
  });

  it('ends FAILED (SourceUnavailable) when the asset does not exist', async () => {
    const t = await newTenant('fail-missing-asset');
    const bucket = await as(t.key).post('/api/buckets', { name: 'empty' });
    const created = await as(t.key).post('/api/structures', {
      name: 'n',
      code: { data_lake: { bucket_id: bucket.body.bucket_id, asset_path: 'nothing.zip' } },
    });
    const done = await waitForDeployment(t.key, created.body.latest_deployment_id);
    expect(done.status_detail).to.include({ reason: 'SourceUnavailable' });
    expect(done.status_detail.message).to.include('nothing.zip');
  });

  it('ends ERROR (InfrastructureError) when the blob store cannot be read, after retrying', async () => {
    const t = await newTenant('blob-fault');
    const bucketId = await uploadToNewBucket(t.key, 'p.zip', makeArchive('zip', entriesOf(nodeMain)));
    // The stored bytes become unreadable (a directory where the file was): EISDIR on read.
    const blob = path.join(getStack().config.blobDir, assetBlobKey(bucketId, 'p.zip'));
    fs.rmSync(blob);
    fs.mkdirSync(blob);
    const created = await as(t.key).post('/api/structures', {
      name: 'n',
      code: { data_lake: { bucket_id: bucketId, asset_path: 'p.zip' } },
    });
    const done = await waitForDeployment(t.key, created.body.latest_deployment_id);
    expect(done.status, JSON.stringify(done)).to.equal('ERROR');
    expect(done.status_detail.reason).to.equal('InfrastructureError');
    expect(done.status_detail.message).to.include('EISDIR');
  });

  it('places a file that is not an archive as a single file', async () => {
    const done = await deploy(
      'single-file',
      'dir/structure_config.yaml',
      Buffer.from(config('nodejs', '  main_file: structure_config.yaml\n')),
    );
    expect(done.status, JSON.stringify(done.status_detail)).to.equal('SUCCEEDED');
  });

  const escapes: Array<[string, 'zip' | 'tar.gz', ArchiveEntry[], RegExp]> = [
    ['a ../ entry in a zip', 'zip', [{ name: '../evil', content: 'x' }], /relative path|contains `\.\.`/],
    [
      'a ../ entry in a tar.gz',
      'tar.gz',
      [
        { name: 'ok.txt', content: 'x' },
        { name: 'a/../../evil', content: 'x' },
      ],
      /contains `\.\.`/,
    ],
    ['an absolute entry in a tar.gz', 'tar.gz', [{ name: '/tmp/evil', content: 'x' }], /absolute path/],
    [
      'a symlink out of a tar.gz',
      'tar.gz',
      [
        { name: 'link', symlink: '../../..' },
        { name: 'link/evil', content: 'x' },
      ],
      /link pointing outside/,
    ],
    ['an absolute symlink in a zip', 'zip', [{ name: 'link', symlink: '/etc' }], /absolute path "\/etc"/],
    [
      'a symlink chain out of a tar.gz',
      'tar.gz',
      [
        { name: 'sub', dir: true },
        { name: 'sub/up', symlink: '..' },
        { name: 'sub/out', symlink: 'up/..' },
      ],
      /link pointing outside/,
    ],
  ];
  for (const [what, kind, entries, message] of escapes) {
    it(`refuses ${what} (UnsafeArchive) and writes nothing outside`, async () => {
      const { buildDir } = getStack().config;
      const done = await deploy(
        'unsafe',
        `project.${kind}`,
        makeArchive(kind, [
          ...entries,
          ...entriesOf({ 'structure_config.yaml': config('nodejs', '  main_file: main.js\n'), ...nodeMain }),
        ]),
      );
      expect(done.status, JSON.stringify(done)).to.equal('FAILED');
      expect(done.status_detail.reason).to.equal('UnsafeArchive');
      expect(done.status_detail.message).to.match(message);
      for (const place of [path.join(buildDir, 'evil'), path.join(buildDir, done.deployment_id, 'evil'), '/tmp/evil']) {
        expect(fs.existsSync(place), place).to.equal(false);
      }
    });
  }
});

describe('files a build plants for the worker', function () {
  this.timeout(180_000);

  it('pyvenv.cfg as a link to a root-only file or a FIFO: nothing read, nothing blocked, another deployment on time', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tarmac-secret-'));
    fs.chmodSync(dir, 0o711);
    const secret = path.join(dir, 'root-only.cfg');
    fs.writeFileSync(secret, 'version = 6.6.6-SECRET\n', { mode: 0o600 });
    const venv = 'V="$(dirname "$(dirname "$(command -v python)")")"\nrm -f "$V/pyvenv.cfg"\n';
    const plants = [
      `ln -s ${secret} "$V/pyvenv.cfg"`,
      'mkfifo "$V/pyvenv.cfg"',
      'mkfifo "$V/fifo"\nln -s "$V/fifo" "$V/pyvenv.cfg"',
      'mkfifo "$V/pyvenv.cfg"',
      'mkfifo "$V/fifo"\nln -s fifo "$V/pyvenv.cfg"',
    ];
    const t = await newTenant('plants');
    const started = Date.now();
    try {
      const planted = plants.map(async (plant, i) => {
        const zip = makeArchive(
          'zip',
          entriesOf({
            'structure_config.yaml': config(
              'python3',
              '  main_file: main.py\n',
              '  post_build_install_script: plant.sh\n',
            ),
            'main.py': 'print("hi")\n',
            'plant.sh': `set -e\n${venv}${plant}\n`,
          }),
        );
        const bucketId = await uploadToNewBucket(t.key, `plant${i}.zip`, zip);
        const created = await as(t.key).post('/api/structures', {
          name: `plant ${i}`,
          code: { data_lake: { bucket_id: bucketId, asset_path: `plant${i}.zip` } },
        });
        expect(created.status, created.text).to.equal(201);
        return waitForDeployment(t.key, created.body.latest_deployment_id);
      });
      for (const done of await Promise.all(planted)) {
        expect(done.status, JSON.stringify(done.status_detail)).to.equal('SUCCEEDED');
        expect(done.status_detail.interpreter_version, 'no version read through the plant').to.equal(undefined);
        expect(JSON.stringify(done)).to.not.include('6.6.6');
      }
      expect(Date.now() - started).to.be.lessThan(150_000);
      // Four FIFOs opened for reading used to hold all four of the worker's libuv threads for good: another
      // organization's deployment, which reads files too, then hung. Now it deploys as on a quiet worker.
      const otherStarted = Date.now();
      const nodeOnly = { 'structure_config.yaml': config('nodejs', '  main_file: main.js\n'), ...nodeMain };
      const other = await deploy('plants-other', 'other.zip', makeArchive('zip', entriesOf(nodeOnly)));
      expect(other.status).to.equal('SUCCEEDED');
      expect(Date.now() - otherStarted).to.be.lessThan(30_000);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
