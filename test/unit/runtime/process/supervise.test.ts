// One user process to its end (src/runtime/process/supervise.ts), with a stand-in for the sandbox's chain: a
// start whose sandbox could not be set up (exit 125, a last stderr line `tarmac: ...`) is started again, said so
// in the logs, and the run is asked about once; a set-up that keeps failing ends as the last try did; a program
// that merely exits 125 is not tried again.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { superviseUserProcess, type SuperviseOptions } from '../../../../src/runtime/process/supervise';
import type { OutputLine } from '../../../../src/runtime/process/log-pump';
import { SANDBOX_SETUP_RETRY_DELAYS_MS } from '../../../../src/runtime/sandbox/setup-failure';

describe('supervising a user process', function () {
  this.timeout(30_000);
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'supervise-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** Supervises `script` (bash); answers the outcome, the log lines and how often the run was asked about. */
  async function supervise(script: string) {
    const lines: OutputLine[] = [];
    let asked = 0;
    const opts: SuperviseOptions = {
      command: { file: '/bin/bash', argv: ['-c', script], cwd: dir },
      env: { PATH: '/usr/bin:/bin' },
      isolate: (c) => ({ file: c.file, argv: c.argv, extraFiles: [], readExit: (s) => s }),
      logLimitBytes: 1 << 20,
      logBuffer: { lines: 1000, bytes: 1 << 20, graceMs: 1000 },
      killGraceMs: 100,
      writeLogs: async (l) => void lines.push(...l),
      onStarted: async () => (asked++, true),
      heartbeat: () => undefined,
      heartbeatEveryMs: 1000,
      cancelled: new Promise<never>(() => undefined),
    };
    const outcome = await superviseUserProcess(opts);
    return { outcome, logs: lines.map((l) => l.line), asked };
  }

  /** A start that fails its set-up `n` times (counted in a file), then runs. */
  const failingSetup = (n: number) =>
    `c=$(cat ${dir}/tries 2>/dev/null || echo 0); echo $((c + 1)) > ${dir}/tries; ` +
    `if [ $c -lt ${n} ]; then echo "tarmac: the sandbox's network could not be set up: pasta did not start" >&2; exit 125; fi; echo ran`;

  it('starts again a process whose sandbox could not be set up, and asks about the run once', async () => {
    const { outcome, logs, asked } = await supervise(failingSetup(1));
    expect(outcome).to.deep.include({ kind: 'exited', status: { code: 0, signal: null } });
    expect(asked).to.equal(1);
    expect(logs).to.include('ran');
    expect(logs.some((l) => l.startsWith('tarmac: starting it again in 2 s (try 2)'))).to.equal(true);
  });

  it('ends as the last try did when the set-up keeps failing', async () => {
    const { outcome } = await supervise(failingSetup(99));
    expect(outcome.kind).to.equal('exited');
    expect(outcome.kind === 'exited' && outcome.status.code).to.equal(125);
    expect(fs.readFileSync(path.join(dir, 'tries'), 'utf8').trim()).to.equal(
      String(SANDBOX_SETUP_RETRY_DELAYS_MS.length + 1),
    );
  });

  it('does not start again a program that exits 125 on its own (no set-up line)', async () => {
    const { outcome } = await supervise(`echo tries >> ${dir}/tries; echo "mine" >&2; exit 125`);
    expect(outcome.kind === 'exited' && outcome.status.code).to.equal(125);
    expect(fs.readFileSync(path.join(dir, 'tries'), 'utf8').trim().split('\n')).to.have.length(1);
  });
});
