// Each run's network namespace (src/runtime/sandbox/network.ts): SANDBOX_ALLOW_HOST_PORTS is read as
// host:port pairs; the helper forwards nothing inwards and only the chosen loopback ports outwards; and a
// real run, through the public api, sees none of the host's sockets, reaches neither a listener on
// 127.0.0.1 nor one on the host's own address, cannot listen on a port of the host, and still reaches the
// api and the one allowed host:port (the attacks of the hostile-machine drill, test/drills/hostile-machine).
// The launcher neither waits for the helper's exit nor leaves it behind, and says why the helper did not start.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../../../src/config';
import { helperProgram, loopbackPortsOf, RunNetwork, SETUP_STALL_S } from '../../../../src/runtime/sandbox/network';
import { attacks } from '../../../drills/hostile-machine/network';
import { getStack } from '../../../harness/stack';

describe('sandbox: a network namespace per run', function () {
  this.timeout(240_000);

  it('reads SANDBOX_ALLOW_HOST_PORTS as host:port pairs and refuses anything else', () => {
    expect(loadConfig({}).sandbox.allowHostPorts).to.deep.equal([]);
    expect(
      loadConfig({ SANDBOX_ALLOW_HOST_PORTS: '127.0.0.1:11434, [::1]:8080,models.internal:443' }).sandbox
        .allowHostPorts,
    ).to.deep.equal([
      { host: '127.0.0.1', port: 11434 },
      { host: '::1', port: 8080 },
      { host: 'models.internal', port: 443 },
    ]);
    for (const bad of ['127.0.0.1', '10.0.0.0/8', '127.0.0.1:0', '127.0.0.1:70000', '::1:80', 'a b:1']) {
      let problems: string[] = [];
      try {
        loadConfig({ SANDBOX_ALLOW_HOST_PORTS: bad });
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        problems = err.problems;
      }
      expect(problems.join('\n'), bad).to.match(
        /SANDBOX_ALLOW_HOST_PORTS (entries must be .*host:port|takes host:port pairs only)/,
      );
    }
  });

  it('forwards nothing inwards, only the loopback ports of the api and the allowed host:ports outwards', () => {
    const ports = loopbackPortsOf([
      { address: '127.0.0.1', port: 8080 },
      { address: '::1', port: 11434 },
      { address: '10.1.2.3', port: 5432 },
    ]);
    expect(ports).to.deep.equal([8080, 11434]);
    const argv = new RunNetwork(
      { pasta: '/usr/bin/pasta', setpriv: '/usr/bin/setpriv' },
      { loopbackPorts: ports, resolvers: [] },
    ).launch(200_001, 300_001, ['/usr/bin/bwrap', '--', '/bin/true']);
    const helper = argv.slice(argv.indexOf('300001') + 1, argv.indexOf('--'));
    const option = (name: string) => helper[helper.indexOf(name) + 1];
    expect(option('--tcp-ports')).to.equal('none');
    expect(option('--udp-ports')).to.equal('none');
    expect(option('--udp-ns')).to.equal('none');
    expect(option('--tcp-ns')).to.equal('8080,11434');
    expect(helper).to.include('--no-map-gw');
    // No setup step (the root mode) and no limits: a count of 0 words each, then the command.
    expect(argv.slice(argv.indexOf('--') + 1)).to.deep.equal(['0', '0', '/usr/bin/bwrap', '--', '/bin/true']);
  });

  it('starts the network helper only once bubblewrap has brought its loopback up, however slow bubblewrap is', () => {
    // pasta brings the namespace's loopback up too; had it come first, bubblewrap's own address add would meet
    // EEXIST ("bwrap: loopback: Failed RTM_NEWADDR") and the run would end as if its code had exited 1. strace
    // holds each of bubblewrap's netlink requests for 300 ms, so without the wait pasta always comes first.
    const tool = (name: string) => execFileSync('bash', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim();
    const uid = '65000';
    const network = new RunNetwork(
      { pasta: tool('pasta'), setpriv: tool('setpriv') },
      { loopbackPorts: [], resolvers: [] },
    );
    const slowBwrap = [
      tool('strace'),
      '-f',
      '-qq',
      '-o',
      '/dev/null',
      '-e',
      'trace=sendto',
      '-e',
      'inject=sendto:delay_enter=300000',
      tool('bwrap'),
      '--unshare-user',
      '--unshare-pid',
      ...network.bwrapArgs(),
      '--ro-bind',
      '/',
      '/',
      '--proc',
      '/proc',
      '--dev',
      '/dev',
      '--',
      '/bin/sh',
      '-c',
      'grep -c 127.0.0.1 /proc/net/fib_trie',
    ];
    const r = spawnSync(
      tool('setpriv'),
      [
        `--reuid=${uid}`,
        `--regid=${uid}`,
        '--clear-groups',
        '--',
        tool('bash'),
        ...network.launch(Number(uid), Number(uid), slowBwrap),
      ],
      {
        encoding: 'utf8',
        timeout: 30_000,
      },
    );
    expect(r.stderr).to.not.match(/RTM_NEWADDR/);
    expect(r.status, r.stderr).to.equal(0);
    expect(Number(r.stdout.trim()), 'the program sees its loopback address').to.be.greaterThan(0);
  });

  it("names pasta's AVX2 build directly where the CPU has AVX2 (pasta would execute it itself), else pasta", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tarmac-cpuinfo-'));
    try {
      const cpuinfo = (flags: string) => {
        fs.writeFileSync(path.join(dir, 'cpuinfo'), `processor\t: 0\nflags\t\t: ${flags}\n`);
        return path.join(dir, 'cpuinfo');
      };
      const pasta = path.join(dir, 'pasta');
      fs.writeFileSync(pasta, '', { mode: 0o755 });
      expect(helperProgram(pasta, cpuinfo('fpu sse2 avx2 bmi2'))).to.equal(pasta, 'no pasta.avx2 beside it');
      fs.writeFileSync(`${pasta}.avx2`, '', { mode: 0o755 });
      expect(helperProgram(pasta, cpuinfo('fpu sse2 avx2 bmi2'))).to.equal(`${pasta}.avx2`);
      expect(helperProgram(pasta, cpuinfo('fpu sse2 avx512f'))).to.equal(pasta, 'no AVX2');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('the launcher, with a stand-in for pasta', () => {
    const tool = (name: string) => execFileSync('bash', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim();
    const uid = 65000;
    let dir: string;
    beforeEach(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tarmac-helper-'));
      fs.chmodSync(dir, 0o777); // the stand-in writes its pid here as the run's uid
    });
    afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

    /** Runs `program` under the launcher as `uid`, with `helper` (a shell script) in pasta's place. */
    const launch = (helper: string, program: string) => {
      const file = path.join(dir, 'pasta');
      fs.writeFileSync(file, `#!/bin/bash\n${helper}\n`, { mode: 0o755 });
      const network = new RunNetwork({ pasta: file, setpriv: tool('setpriv') }, { loopbackPorts: [], resolvers: [] });
      const bwrap = [tool('bwrap'), '--unshare-user', '--unshare-pid', '--die-with-parent', ...network.bwrapArgs()];
      const sandboxed = [...bwrap, '--ro-bind', '/', '/', '--proc', '/proc', '--dev', '/dev', '--', '/bin/sh', '-c'];
      const started = Date.now();
      const r = spawnSync(
        tool('setpriv'),
        [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', '--', tool('bash')].concat(
          network.launch(uid, uid, [...sandboxed, program]),
        ),
        { encoding: 'utf8', timeout: 60_000 },
      );
      return { ...r, ms: Date.now() - started };
    };

    it("ends with the program, neither waiting for the helper's exit nor leaving it behind", () => {
      // A helper that ignores SIGTERM and would run 20 s: the run's output and status come at once, and it is gone.
      const pidFile = path.join(dir, 'helper.pid');
      const r = launch(
        // -P <file> <pid>: pasta's pid file is the last but one argument.
        `echo $$ > ${pidFile}; echo $$ > "\${@: -2:1}"; trap '' TERM; exec sleep 20`,
        'echo the program ran',
      );
      expect(r.status, r.stderr).to.equal(0);
      expect(r.stdout.trim()).to.equal('the program ran');
      expect(r.ms, 'neither the launcher nor the output waits for the helper').to.be.lessThan(10_000);
      const helper = Number(fs.readFileSync(pidFile, 'utf8'));
      // Gone, or a zombie its new parent has yet to reap: either way it runs nothing.
      const alive = () => {
        try {
          return /^State:\s+[^Z]/m.test(fs.readFileSync(`/proc/${helper}/status`, 'utf8'));
        } catch {
          return false;
        }
      };
      const deadline = Date.now() + 5_000;
      while (alive() && Date.now() < deadline) execFileSync('sleep', ['0.05']);
      expect(alive(), 'the helper was killed').to.equal(false);
    });

    it("reports the helper's own message when it fails to start, as the sandbox's setup failing", () => {
      const r = launch('echo "Failed to open tun socket in namespace" >&2; exit 1', 'echo never');
      expect(r.status).to.equal(125);
      expect(r.stdout).to.equal('');
      expect(r.stderr).to.match(
        /network could not be set up: pasta did not start \(it exited with status 1\): Failed to open tun socket/,
      );
      // The line the supervisor reads is the last: bash's report of the bubblewrap it killed does not follow it.
      expect(r.stderr.trim().split('\n').at(-1)).to.match(/^tarmac: the sandbox's network could not be set up/);
    });

    it(`waits for a helper that is slow but at work past ${SETUP_STALL_S} s, as on a busy host`, () => {
      // Computing for longer than the stall time, then reporting: the old 20 s deadline failed such a run.
      const r = launch(
        `end=$((SECONDS + ${SETUP_STALL_S + 3})); while ((SECONDS < end)); do :; done; echo $$ > "\${@: -2:1}"; exec sleep 20`,
        'echo the program ran',
      );
      expect(r.status, r.stderr).to.equal(0);
      expect(r.stdout.trim()).to.equal('the program ran');
      expect(r.ms).to.be.greaterThan((SETUP_STALL_S + 2) * 1000);
    }).timeout(90_000);

    it(`waits for a helper whose child is at work past ${SETUP_STALL_S} s (pasta sleeps while its child works)`, () => {
      // The helper itself sleeps in wait(2), its CPU time unchanged: under load, a run's pasta waited so for the
      // child that enters the namespace, and the launcher failed it ("pasta did not start") although it worked.
      const r = launch(
        `( end=$((SECONDS + ${SETUP_STALL_S + 3})); while ((SECONDS < end)); do :; done ); echo $$ > "\${@: -2:1}"; exec sleep 20`,
        'echo the program ran',
      );
      expect(r.status, r.stderr).to.equal(0);
      expect(r.stdout.trim()).to.equal('the program ran');
      expect(r.ms).to.be.greaterThan((SETUP_STALL_S + 2) * 1000);
    }).timeout(90_000);

    it(`fails a helper that does nothing for ${SETUP_STALL_S} s, saying so`, () => {
      const r = launch('echo "stuck" >&2; exec sleep 120', 'echo never');
      expect(r.status, r.stderr).to.equal(125);
      expect(r.stdout).to.equal('');
      expect(r.stderr).to.match(
        new RegExp(`network could not be set up: pasta did not start \\(no progress for ${SETUP_STALL_S} s\\)`),
      );
      expect(r.ms).to.be.lessThan((SETUP_STALL_S + 15) * 1000);
    }).timeout(90_000);
  });

  for (const attack of attacks) {
    it(`${attack.name}: ${attack.limit}`, async () => {
      const notes: string[] = [];
      const r = await attack.run({ stack: getStack(), quick: true, note: (l) => notes.push(l) });
      expect(r.held, r.result).to.equal(true);
    });
  }
});
