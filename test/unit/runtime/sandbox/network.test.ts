// Each run's network namespace (src/runtime/sandbox/network.ts): SANDBOX_ALLOW_HOST_PORTS is read as
// host:port pairs; the helper forwards nothing inwards and only the chosen loopback ports outwards; and a
// real run, through the public api, sees none of the host's sockets, reaches neither a listener on
// 127.0.0.1 nor one on the host's own address, cannot listen on a port of the host, and still reaches the
// api and the one allowed host:port (the attacks of the hostile-machine drill, test/drills/hostile-machine).
import { execFileSync, spawnSync } from 'node:child_process';
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../../../src/config';
import { loopbackPortsOf, RunNetwork } from '../../../../src/runtime/sandbox/network';
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
    // No setup step (the root mode): a count of 0 words, then the command.
    expect(argv.slice(argv.indexOf('--') + 1)).to.deep.equal(['0', '/usr/bin/bwrap', '--', '/bin/true']);
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

  for (const attack of attacks) {
    it(`${attack.name}: ${attack.limit}`, async () => {
      const notes: string[] = [];
      const r = await attack.run({ stack: getStack(), quick: true, note: (l) => notes.push(l) });
      expect(r.held, r.result).to.equal(true);
    });
  }
});
