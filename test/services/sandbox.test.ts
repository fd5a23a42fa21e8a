// The sandbox fails closed: a worker that cannot isolate user code refuses to run any, naming the setting;
// and the pieces whose logic is dense (exit statuses through bubblewrap, the seccomp program) hold.
import { execFile, execFileSync } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import { sandboxExitStatus, startUserProcess } from '../../src/runtime/process/user-process';
import { REFUSED_SYSCALLS, seccompProgram } from '../../src/runtime/sandbox/seccomp';
import { python3 } from '../harness/builds';
import { getStack } from '../harness/stack';

const DIST = path.join(__dirname, '..', '..');

describe('sandbox', () => {
  it('opens the rootless mode for a worker that cannot switch user code to run uids, and its probe holds', async () => {
    // `nobody`, without capabilities: it can neither setuid nor install host firewall rules, but this host lets
    // it make user namespaces (isolation.ts). The probe (a run's uid, no capabilities, seccomp, a network
    // namespace of its own whose packet filter refuses the host's loopback and own address) must pass.
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tarmac-rootless-'));
    fs.chownSync(dataDir, Number(execFileSync('id', ['-u', 'nobody'])), 0);
    const script = `
      const { Sandbox } = require(${JSON.stringify(path.join(DIST, 'src/runtime/sandbox/sandbox.js'))});
      const { loadConfig } = require(${JSON.stringify(path.join(DIST, 'src/config/index.js'))});
      const config = loadConfig({ DATA_DIR: ${JSON.stringify(dataDir)} });
      Sandbox.open(config.sandbox, { log: { warn() {}, info() {} }, apiBaseUrl: 'http://127.0.0.1:1' })
        .then((s) => { console.log('opened ' + s.mode); process.exit(0); }, (err) => { console.log(err.constructor.name + ': ' + err.message); process.exit(3); });`;
    const run = promisify(execFile)('setpriv', [
      '--reuid=nobody',
      '--regid=nogroup',
      '--clear-groups',
      '--',
      process.execPath,
      '-e',
      script,
    ]);
    try {
      const { stdout } = await run.catch((e: { stdout: string }) => ({ stdout: e.stdout }));
      expect(stdout.trim()).to.equal('opened rootless');
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
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
    // arch check (3) + x32 (3) + 2 per refused call + socket (10) + clone3 (2) + clone (5)
    expect(program.length / 8).to.equal(6 + 2 * Object.keys(REFUSED_SYSCALLS).length + 10 + 2 + 5);
    expect(program.readUInt32LE(program.length - 4)).to.equal(0x7fff0000);
    expect(seccompProgram('arm64')).to.equal(undefined);
  });

  it('binds the program by its per-process limits (CPU seconds, processes, file size, open files, no core dumps)', async () => {
    const { sandbox } = getStack().activityDeps;
    const c = sandbox.config;
    const identity = (await sandbox.identity(c.gidBase, 512 * 1024 * 1024))!;
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'tarmac-sandbox-test-'));
    fs.chownSync(home, identity.uid, identity.gid);
    const lines: string[] = [];
    try {
      const w = sandbox.wrap({
        file: '/bin/cat',
        argv: ['/proc/self/limits'],
        cwd: '/',
        home,
        memoryBytes: 512 * 1024 * 1024,
        identity,
      });
      const child = await startUserProcess({
        ...w,
        cwd: '/',
        env: { PATH: '/usr/bin:/bin' },
        onLine: (_s, l) => lines.push(l),
      });
      expect((await child.finished).code, lines.join('\n')).to.equal(0);
    } finally {
      await identity.release();
      fs.rmSync(home, { recursive: true, force: true });
    }
    const limit = (name: string) =>
      lines
        .find((l) => l.startsWith(name))
        ?.slice(26)
        .trim()
        .split(/\s+/)
        .slice(0, 2);
    expect(limit('Max cpu time')).to.deep.equal([String(c.cpuSeconds), String(c.cpuSeconds + 5)]);
    expect(limit('Max processes')).to.deep.equal([String(c.maxProcesses + 16), String(c.maxProcesses + 16)]);
    expect(limit('Max file size')).to.deep.equal([String(c.fileBytes), String(c.fileBytes)]);
    expect(limit('Max open files')).to.deep.equal([String(c.maxOpenFiles), String(c.maxOpenFiles)]);
    expect(limit('Max core file size')).to.deep.equal(['0', '0']);
  });

  it("gives the program its environment and the steps that start it none of it (LD_PRELOAD, BASH_ENV of the tenant's)", async () => {
    const { sandbox } = getStack().activityDeps;
    const identity = (await sandbox.identity(sandbox.config.gidBase, 512 * 1024 * 1024))!;
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'tarmac-sandbox-test-'));
    fs.chownSync(home, identity.uid, identity.gid);
    // What a tenant could plant: a script that bash would source as BASH_ENV, on the host's file system (the
    // network launcher runs there), leaving a mark where anyone may write.
    const planted = fs.mkdtempSync(path.join(os.tmpdir(), 'tarmac-planted-'));
    fs.chmodSync(planted, 0o777);
    const mark = path.join(planted, 'sourced');
    fs.writeFileSync(path.join(planted, 'evil.sh'), `echo yes > ${mark}\n`, { mode: 0o755 });
    const env = {
      PATH: '/usr/bin:/bin',
      HOME: home,
      BASH_ENV: path.join(planted, 'evil.sh'),
      LD_PRELOAD: path.join(planted, 'missing.so'),
      TENANT_SECRET: 'line one\nline two = with "quotes" and $dollars',
    };
    const lines: string[] = [];
    try {
      const w = sandbox.wrap({
        file: python3(),
        argv: ['-c', 'import json, os; print(json.dumps(dict(os.environ)))'],
        cwd: '/',
        home,
        memoryBytes: 512 * 1024 * 1024,
        identity,
      });
      const child = await startUserProcess({ ...w, cwd: '/', env, onLine: (_stream, line) => lines.push(line) });
      expect((await child.finished).code, lines.join('\n')).to.equal(0);
    } finally {
      await identity.release();
      fs.rmSync(home, { recursive: true, force: true });
    }
    expect(fs.existsSync(mark), "a step outside the sandbox sourced the tenant's BASH_ENV").to.equal(false);
    fs.rmSync(planted, { recursive: true, force: true });
    // The loader complains once per program that gets the missing LD_PRELOAD: inside the sandbox only, env(1)
    // and the program (the steps before them would add more).
    expect(lines.filter((l) => l.includes('cannot be preloaded'))).to.have.length.at.most(2);
    const seen = JSON.parse(lines.find((l) => l.startsWith('{'))!) as Record<string, string>;
    expect(seen).to.include({ TENANT_SECRET: env.TENANT_SECRET, BASH_ENV: env.BASH_ENV, HOME: home });
    // Nothing else (Python's locale coercion may add LC_CTYPE itself).
    expect(
      Object.keys(seen)
        .filter((k) => k !== 'LC_CTYPE')
        .sort(),
    ).to.deep.equal(Object.keys(env).sort());
  });

  it('gives user code unix, IPv4, IPv6 and route netlink sockets only (no vsock, no raw packets), RLIMIT_NOFILE, a read-only /dev and a sized /dev/shm', async () => {
    const { sandbox } = getStack().activityDeps;
    const { maxOpenFiles, shmBytes } = sandbox.config;
    const identity = (await sandbox.identity(sandbox.config.gidBase, 512 * 1024 * 1024))!;
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'tarmac-sandbox-test-'));
    fs.chownSync(home, identity.uid, identity.gid);
    const program = `import errno, os, socket
def attempt(name, family, kind, proto=0):
    try:
        socket.socket(family, kind, proto).close()
        print(name, "opened")
    except OSError as e:
        print(name, errno.errorcode[e.errno])
attempt("inet", socket.AF_INET, socket.SOCK_STREAM)
attempt("inet6", socket.AF_INET6, socket.SOCK_DGRAM)
attempt("netlink-route", socket.AF_NETLINK, socket.SOCK_RAW, 0)
attempt("netlink-uevent", socket.AF_NETLINK, socket.SOCK_RAW, 15)
attempt("vsock", 40, socket.SOCK_STREAM)
attempt("packet", 17, socket.SOCK_RAW)
attempt("unix", socket.AF_UNIX, socket.SOCK_STREAM)
print("getaddrinfo", socket.getaddrinfo("localhost", 80, socket.AF_INET)[0][4][0])
files = []
try:
    while True:
        files.append(open("/dev/null"))
except OSError as e:
    print("files", len(files) + 3, errno.errorcode[e.errno])
for f in files:
    f.close()
written = 0
try:
    with open("/dev/shm/fill", "wb") as f:
        while True:
            f.write(b"x" * 1048576)
            f.flush()
            written += 1048576
except OSError as e:
    print("shm", written, errno.errorcode[e.errno])
try:
    open("/dev/planted", "w")
except OSError as e:
    print("dev", errno.errorcode[e.errno])
`;
    const lines: string[] = [];
    try {
      const w = sandbox.wrap({
        file: python3(),
        argv: ['-c', program],
        cwd: '/',
        home,
        memoryBytes: 512 * 1024 * 1024,
        identity,
      });
      const child = await startUserProcess({
        ...w,
        cwd: '/',
        env: { PATH: '/usr/bin:/bin', HOME: home },
        onLine: (_stream, line) => lines.push(line),
      });
      expect((await child.finished).code, lines.join('\n')).to.equal(0);
    } finally {
      await identity.release();
      fs.rmSync(home, { recursive: true, force: true });
    }
    const said = new Map(lines.map((l) => [l.split(' ')[0], l.split(' ').slice(1).join(' ')]));
    expect(said.get('inet')).to.equal('opened');
    expect(said.get('inet6')).to.equal('opened');
    expect(said.get('netlink-route')).to.equal('opened');
    expect(said.get('netlink-uevent')).to.equal('EAFNOSUPPORT');
    expect(said.get('vsock')).to.equal('EAFNOSUPPORT');
    expect(said.get('packet')).to.equal('EAFNOSUPPORT');
    expect(said.get('unix')).to.equal('opened');
    expect(said.get('getaddrinfo')).to.equal('127.0.0.1');
    // stdin, stdout, stderr, what the interpreter holds and the files it opened: the limit, then EMFILE.
    const [opened, error] = said.get('files')!.split(' ');
    expect(error).to.equal('EMFILE');
    expect(Number(opened)).to.be.within(maxOpenFiles - 8, maxOpenFiles);
    expect(said.get('shm')).to.equal(`${shmBytes} ENOSPC`);
    expect(said.get('dev')).to.equal('EROFS');
  });
});
