// The Temporal Web UI of the cluster: the UI server (github.com/temporalio/ui-server, the UI the pinned CLI embeds)
// as a process of its own, its config in `<dir>/config/ui.yaml`, its log in `<dir>/ui-server.log`. It talks gRPC
// to one frontend address: the first node's, or the load balancer's in front of the frontends when there is one.
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { ClusterProcess, waitUntilReady } from './node-process';

export interface UiServerOptions {
  binary: string;
  dir: string;
  /** Where the UI listens (host and port). */
  host: string;
  port: number;
  /** The frontend (or load balancer) it sends every request to, `host:port`. */
  temporalGrpcAddress: string;
  readyTimeoutMs?: number;
}

export interface RunningUiServer {
  url: string;
  process: ClusterProcess;
  stop(): Promise<void>;
}

export async function startUiServer(opts: UiServerOptions): Promise<RunningUiServer> {
  fs.mkdirSync(path.join(opts.dir, 'config'), { recursive: true });
  const config = {
    temporalGrpcAddress: opts.temporalGrpcAddress,
    host: opts.host,
    port: opts.port,
    enableUi: true,
    defaultNamespace: 'default',
    showTemporalSystemNamespace: false,
    notifyOnNewVersion: false, // it would ask the internet
    refreshInterval: '1m',
    cors: { cookieInsecure: true, allowOrigins: [`http://${opts.host}:${opts.port}`] },
    auth: { enabled: false },
  };
  fs.writeFileSync(path.join(opts.dir, 'config', 'ui.yaml'), YAML.stringify(config));
  const proc = new ClusterProcess(
    'temporal-ui',
    opts.binary,
    ['--root', opts.dir, '--config', 'config', '--env', 'ui', 'start'],
    path.join(opts.dir, 'ui-server.log'),
  );
  const url = `http://${opts.host}:${opts.port}`;
  try {
    await waitUntilReady(
      proc,
      'the Temporal UI server',
      async () => (await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) })).ok,
      opts.readyTimeoutMs ?? 60_000,
    );
  } catch (err) {
    await proc.kill();
    throw err;
  }
  return { url, process: proc, stop: async () => void (await proc.stop()) };
}
