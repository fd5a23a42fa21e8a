// Temporal over TLS (src/config/temporal.ts, temporalConnectionOptions): the client of the api and the worker's
// native connection reach a real Temporal dev server behind a real HAProxy that terminates mutual TLS, as a
// cluster with TLS or Temporal Cloud's edge does. With the client certificate and the CA of the server's they
// connect; without the certificate, or trusting another CA, they are refused. Certificates made by openssl.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { expect } from 'chai';
import { loadConfig, temporalConnectionOptions } from '../../../src/config';
import { devServerEnvironment, quietRuntime } from '../../harness/dev-server';
import { freePort } from '../../harness/ports';
import { REPO_ROOT } from '../../support/house';

const openssl = (dir: string, ...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });

/** A CA, a server certificate for 127.0.0.1 and temporal.test signed by it, and a client certificate. */
function makeCertificates(dir: string, ca = 'ca'): void {
  openssl(
    dir,
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '2',
    '-subj',
    `/CN=${ca}`,
    '-keyout',
    `${ca}.key`,
    '-out',
    `${ca}.pem`,
  );
  for (const [name, ext] of [
    ['server', 'subjectAltName=IP:127.0.0.1,DNS:temporal.test\nextendedKeyUsage=serverAuth'],
    ['client', 'extendedKeyUsage=clientAuth'],
  ]) {
    fs.writeFileSync(path.join(dir, `${name}.ext`), ext);
    openssl(
      dir,
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-subj',
      `/CN=${name}`,
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.csr`,
    );
    openssl(
      dir,
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      `${ca}.pem`,
      '-CAkey',
      `${ca}.key`,
      '-CAcreateserial',
      '-days',
      '2',
      '-extfile',
      `${name}.ext`,
      '-out',
      `${name}.pem`,
    );
  }
  fs.writeFileSync(
    path.join(dir, 'server-bundle.pem'),
    fs.readFileSync(path.join(dir, 'server.pem'), 'utf8') + fs.readFileSync(path.join(dir, 'server.key'), 'utf8'),
  );
}

describe('Temporal over mutual TLS (a TLS-terminating HAProxy in front of the dev server)', function () {
  this.timeout(120_000);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tarmac-temporal-tls-'));
  let env: TestWorkflowEnvironment;
  let haproxy: ChildProcess;
  let address: string;

  before(async () => {
    quietRuntime();
    makeCertificates(dir);
    fs.mkdirSync(path.join(dir, 'other'));
    makeCertificates(path.join(dir, 'other'), 'other-ca');
    env = await devServerEnvironment(loadConfig({}));
    const port = await freePort();
    address = `127.0.0.1:${port}`;
    const binary = execFileSync('bash', [path.join(REPO_ROOT, 'tools', 'obtain-haproxy.sh')], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .pop()!;
    fs.writeFileSync(
      path.join(dir, 'haproxy.cfg'),
      [
        'defaults',
        '  mode tcp',
        '  timeout connect 5s',
        '  timeout client 60s',
        '  timeout server 60s',
        'frontend temporal',
        `  bind ${address} ssl crt ${dir}/server-bundle.pem ca-file ${dir}/ca.pem verify required alpn h2`,
        '  default_backend dev',
        'backend dev',
        `  server dev ${env.address}`,
        '',
      ].join('\n'),
    );
    haproxy = spawn(binary, ['-db', '-f', path.join(dir, 'haproxy.cfg')], { stdio: 'ignore' });
    for (let deadline = Date.now() + 10_000; ; await new Promise((r) => setTimeout(r, 100))) {
      const up = await new Promise<boolean>((resolve) => {
        const s = net.connect(port, '127.0.0.1', () => (s.destroy(), resolve(true)));
        s.on('error', () => resolve(false));
      });
      if (up) break;
      if (Date.now() > deadline) throw new Error('HAProxy did not listen');
    }
  });
  after(async () => {
    haproxy?.kill('SIGKILL');
    await env?.teardown();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const configOf = (vars: Record<string, string>) =>
    loadConfig({ TEMPORAL_ADDRESS: address, TEMPORAL_TLS_SERVER_NAME: 'temporal.test', ...vars });
  const mtls = {
    TEMPORAL_TLS_CERT_FILE: path.join(dir, 'client.pem'),
    TEMPORAL_TLS_KEY_FILE: path.join(dir, 'client.key'),
    TEMPORAL_TLS_CA_FILE: path.join(dir, 'ca.pem'),
  };

  it("connects the api's client and the worker's native connection with the client certificate", async () => {
    const options = temporalConnectionOptions(configOf(mtls));
    const client = await Connection.connect(options);
    try {
      const info = await client.workflowService.getSystemInfo({});
      expect(info.serverVersion).to.match(/^1\./);
    } finally {
      await client.close();
    }
    const native = await NativeConnection.connect(options);
    try {
      const ns = await native.workflowService.describeNamespace({ namespace: 'default' });
      expect(ns.namespaceInfo?.name).to.equal('default');
    } finally {
      await native.close();
    }
  });

  it('is refused without the client certificate, and when it trusts another CA', async () => {
    const refused = async (vars: Record<string, string>) => {
      const options = { ...temporalConnectionOptions(configOf(vars)), connectTimeout: 3_000 };
      const connection = await Connection.connect(options).catch((err: Error) => err);
      if (connection instanceof Error) return true;
      try {
        await connection.withDeadline(Date.now() + 3_000, () => connection.workflowService.getSystemInfo({}));
        return false;
      } catch {
        return true;
      } finally {
        await connection.close();
      }
    };
    expect(await refused({ TEMPORAL_TLS_CA_FILE: mtls.TEMPORAL_TLS_CA_FILE })).to.equal(true);
    expect(await refused({ ...mtls, TEMPORAL_TLS_CA_FILE: path.join(dir, 'other', 'other-ca.pem') })).to.equal(true);
  });

  it('reads the TLS settings: files in pairs, TLS implied by any of them and by an API key', () => {
    expect(loadConfig({}).temporal.tls).to.equal(undefined);
    expect(loadConfig({ TEMPORAL_API_KEY: 'k' }).temporal).to.deep.include({
      apiKey: 'k',
      tls: { clientCertFile: undefined, clientKeyFile: undefined, serverCaFile: undefined, serverName: undefined },
    });
    expect(temporalConnectionOptions(loadConfig({ TEMPORAL_API_KEY: 'k' }))).to.deep.equal({
      address: '127.0.0.1:7233',
      tls: {},
      apiKey: 'k',
    });
    expect(() => loadConfig({ TEMPORAL_TLS_CERT_FILE: '/c.pem' })).to.throw(/TEMPORAL_TLS_KEY_FILE/);
    expect(loadConfig({ TEMPORAL_TLS: 'true' }).temporal.tls).to.not.equal(undefined);
  });
});
