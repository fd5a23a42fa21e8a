// Files user code writes that the worker reads (issue 23, items 5, 11 and 12): a build step that replaces its
// venv's pyvenv.cfg with a link to a root-only file or to a FIFO, and a function whose result is huge. The
// worker reads such files as untrusted (src/runtime/untrusted-file.ts) and a result over a capped pipe
// (src/runtime/process/result-channel.ts): nothing leaks, nothing blocks, nothing lands on the host's /tmp.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { config, entriesOf, makeArchive, uploadToNewBucket, waitForDeployment } from '../../fixtures/projects';
import { as } from '../../harness/client';
import { newTenant } from '../../harness/stack';
import type { MachineAttack } from './kit';

/** The build's venv, from inside a build step (its bin/ is first on PATH). */
const VENV = 'V="$(dirname "$(dirname "$(command -v python)")")"';

/** Creates a structure or function from `files` (an archive in a new bucket) and answers its deployment id. */
async function startDeployment(key: string, kind: 'structures' | 'functions', files: Record<string, string>) {
  const zip = makeArchive('zip', entriesOf(files));
  const bucketId = await uploadToNewBucket(key, 'code.zip', zip);
  const created = await as(key).post(`/api/${kind}`, {
    name: 'files-drill',
    code: { data_lake: { bucket_id: bucketId, asset_path: 'code.zip' } },
  });
  if (created.status !== 201) throw new Error(`creating ${kind} answered ${created.status} ${created.text}`);
  return {
    id: (created.body.structure_id ?? created.body.function_id) as string,
    deploymentId: created.body.latest_deployment_id as string,
  };
}

/** A python structure whose post-build script runs `script` (with $V the venv). */
const plantingProject = (script: string) => ({
  'structure_config.yaml': config('python3', '  main_file: main.py\n', '  post_build_install_script: plant.sh\n'),
  'main.py': 'print("hi")\n',
  'plant.sh': `set -e\n${VENV}\n${script}\n`,
});

/** Another organization's trivial deployment, timed from request to its end. */
async function timedDeployment(): Promise<{ ms: number; status: string }> {
  const t = await newTenant('files-other');
  const started = Date.now();
  const { deploymentId } = await startDeployment(t.key, 'structures', {
    'structure_config.yaml': config('nodejs', '  main_file: main.js\n'),
    'main.js': 'console.log("hi")\n',
  });
  const done = await waitForDeployment(t.key, deploymentId, 120_000);
  return { ms: Date.now() - started, status: done.status };
}

const pyvenvLink: MachineAttack = {
  name: 'pyvenv-link-root-only',
  limit: 'untrusted-file reader (no link followed)',
  async run({ note }) {
    // A root-only file the build can name but not read; before the fix the worker read it for the build.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tarmac-drill-secret-'));
    fs.chmodSync(dir, 0o711);
    const secret = path.join(dir, 'root-only.cfg');
    fs.writeFileSync(secret, 'version = 6.6.6-SECRET\n', { mode: 0o600 });
    try {
      const t = await newTenant('files-link');
      const { deploymentId } = await startDeployment(
        t.key,
        'structures',
        plantingProject(`rm -f "$V/pyvenv.cfg"\nln -s ${secret} "$V/pyvenv.cfg"`),
      );
      const done = await waitForDeployment(t.key, deploymentId, 120_000);
      const version = done.status_detail?.interpreter_version as string | undefined;
      note(`deployment ${done.status}, interpreter_version ${JSON.stringify(version ?? null)}`);
      const leaked = JSON.stringify(done).includes('6.6.6');
      return {
        held: !leaked,
        result: `${done.status}; interpreter_version ${version === undefined ? 'not reported' : JSON.stringify(version)}; secret ${leaked ? 'LEAKED' : 'not read'}`,
      };
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
};

const pyvenvFifo: MachineAttack = {
  name: 'pyvenv-fifo',
  limit: 'untrusted-file reader (regular files only, O_NONBLOCK)',
  async run({ quick, note }) {
    const quiet = await timedDeployment();
    const t = await newTenant('files-fifo');
    // pyvenv.cfg a FIFO, and a link to a FIFO: four of them used to hold all four of libuv's threads.
    const count = quick ? 2 : 4;
    const hostile = await Promise.all(
      Array.from({ length: count }, (_, i) =>
        startDeployment(
          t.key,
          'structures',
          plantingProject(
            i % 2
              ? `rm -f "$V/pyvenv.cfg"\nmkfifo "$V/pyvenv.cfg"`
              : `rm -f "$V/pyvenv.cfg"\nmkfifo "$V/fifo"\nln -s "$V/fifo" "$V/pyvenv.cfg"`,
          ),
        ),
      ),
    );
    const started = Date.now();
    const ended = await Promise.all(
      hostile.map(async (h) => {
        const done = await waitForDeployment(t.key, h.deploymentId, quick ? 90_000 : 120_000).catch(() => undefined);
        return {
          status: (done?.status as string | undefined) ?? 'HUNG',
          ms: Date.now() - started,
          version: done?.status_detail?.interpreter_version,
        };
      }),
    );
    // Then another organization's deployment: a FIFO opened for reading used to keep its libuv thread for good.
    const other = await timedDeployment();
    const slowest = Math.max(...ended.map((e) => e.ms));
    note(
      `quiet deployment ${quiet.ms} ms; after ${count} FIFO builds ${other.ms} ms; FIFO builds ended within ${slowest} ms`,
    );
    const held =
      other.status === 'SUCCEEDED' &&
      other.ms <= Math.max(3 * quiet.ms, quiet.ms + 15_000) &&
      ended.every((e) => e.status !== 'HUNG' && e.version === undefined);
    return {
      held,
      result:
        `${count} FIFO builds ${ended.map((e) => e.status).join('/')} (no version), slowest ${(slowest / 1000).toFixed(1)} s; ` +
        `another org's deployment ${other.status} in ${(other.ms / 1000).toFixed(1)} s (quiet ${(quiet.ms / 1000).toFixed(1)} s)`,
    };
  },
};

/** Bytes under the host's tmp directories of runs (tarmac-run-*), as files there take them. */
function runTmpBytes(): number {
  let total = 0;
  for (const entry of fs.readdirSync(os.tmpdir())) {
    if (!entry.startsWith('tarmac-run-')) continue;
    const dir = path.join(os.tmpdir(), entry);
    for (const f of fs.readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile())) {
      total += fs.lstatSync(path.join(f.parentPath, f.name), { throwIfNoEntry: false })?.size ?? 0;
    }
  }
  return total;
}

const hugeResult: MachineAttack = {
  name: 'huge-function-result',
  limit: 'RUN_RESULT_LIMIT_BYTES=1 MiB (a pipe, no file)',
  async run({ quick, note }) {
    const t = await newTenant('files-result');
    const megabytes = quick ? 16 : 256;
    const { id, deploymentId } = await startDeployment(t.key, 'functions', {
      'function_config.yaml': config('python3', '  main_file: main.py\n'),
      'main.py': `def handler(event):\n    return "x" * (${megabytes} * 1024 * 1024)\n`,
    });
    const deployed = await waitForDeployment(t.key, deploymentId, 120_000);
    if (deployed.status !== 'SUCCEEDED')
      throw new Error(`the function did not deploy: ${JSON.stringify(deployed.status_detail)}`);
    let peak = 0;
    const sampler = setInterval(() => {
      try {
        peak = Math.max(peak, runTmpBytes());
      } catch {
        // a run directory went away while read
      }
    }, 50);
    const started = Date.now();
    const res = await as(t.key).post(`/api/functions/${id}/execute`, {});
    clearInterval(sampler);
    const [run] = (await as(t.key).get(`/api/functions/${id}/runs`)).body.function_runs;
    const reason = run?.status_detail?.reason as string | undefined;
    note(`a ${megabytes} MiB result: HTTP ${res.status}, run ${run?.status} ${reason}, peak run tmp ${peak} bytes`);
    return {
      held: reason === 'ResultTooLarge' && peak < 1024 * 1024,
      result: `${megabytes} MiB result refused (${run?.status} ${reason}) in ${((Date.now() - started) / 1000).toFixed(1)} s; host tmp of runs at most ${(peak / 1024).toFixed(0)} KiB`,
    };
  },
};

export const attacks: MachineAttack[] = [pyvenvLink, pyvenvFifo, hugeResult];
