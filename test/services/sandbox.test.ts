// The sandbox fails closed: a worker that cannot isolate user code refuses to run any, naming the setting;
// and the pieces whose logic is dense (exit statuses through bubblewrap, the seccomp program) hold.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { sandboxExitStatus } from '../../src/runtime/process/user-process';
import { REFUSED_SYSCALLS, seccompProgram } from '../../src/runtime/sandbox/seccomp';

const DIST = path.join(__dirname, '..', '..');

describe('sandbox', () => {
  it('refuses to open (SandboxUnavailable naming SANDBOX) for a worker that cannot switch user code to run uids', async () => {
    // `nobody`, without capabilities: it can neither setuid nor install firewall rules.
    const script = `
      const { Sandbox } = require(${JSON.stringify(path.join(DIST, 'src/runtime/sandbox/sandbox.js'))});
      const { loadConfig } = require(${JSON.stringify(path.join(DIST, 'src/config.js'))});
      const config = loadConfig({ DATA_DIR: '/tmp/tarmac-sandbox-refusal' });
      Sandbox.open(config.sandbox, { log: { warn() {}, info() {} }, apiBaseUrl: 'http://127.0.0.1:1' })
        .then(() => { console.log('opened'); process.exit(0); }, (err) => { console.log(err.constructor.name + ': ' + err.message); process.exit(3); });`;
    const run = promisify(execFile)('setpriv', [
      '--reuid=nobody',
      '--regid=nogroup',
      '--clear-groups',
      '--',
      process.execPath,
      '-e',
      script,
    ]);
    const err = await run.then(
      () => undefined,
      (e: { code: number; stdout: string }) => e,
    );
    expect(err, 'the sandbox opened for an unprivileged worker').to.not.equal(undefined);
    expect(err!.code).to.equal(3);
    expect(err!.stdout).to.match(
      /^SandboxUnavailable: cannot isolate user code on this host: the worker is not root and lacks CAP_SETUID/,
    );
    expect(err!.stdout).to.include('SANDBOX=off');
  });

  it('reads a death by signal reported by bubblewrap (128 + N) back as the signal', () => {
    expect(sandboxExitStatus({ code: 137, signal: null })).to.deep.equal({ code: null, signal: 'SIGKILL' });
    expect(sandboxExitStatus({ code: 152, signal: null })).to.deep.equal({ code: null, signal: 'SIGXCPU' });
    expect(sandboxExitStatus({ code: 3, signal: null })).to.deep.equal({ code: 3, signal: null });
    expect(sandboxExitStatus({ code: null, signal: 'SIGTERM' })).to.deep.equal({ code: null, signal: 'SIGTERM' });
  });

  it('builds one seccomp program of 8-byte instructions that ends in ALLOW, and none on other architectures', () => {
    const program = seccompProgram('x64')!;
    expect(program.length % 8).to.equal(0);
    // arch check (3) + x32 (3) + 2 per refused call + socket (11) + clone3 (2) + clone (5)
    expect(program.length / 8).to.equal(6 + 2 * Object.keys(REFUSED_SYSCALLS).length + 11 + 2 + 5);
    expect(program.readUInt32LE(program.length - 4)).to.equal(0x7fff0000);
    expect(seccompProgram('arm64')).to.equal(undefined);
  });
});
