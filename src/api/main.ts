// Entry point of an api process (`npm run api`).
import http from 'node:http';
import { FsBlobStore } from '../blobs/fs-blob-store';
import { loadConfig, requireRuntime } from '../config';
import { createLogger } from '../logger';
import { createDataSource } from '../persistence/data-source';
import { SecretBox } from '../security/secret-box';
import { connectClient } from '../temporal/connection';
import { runUntilSignal } from '../process-lifecycle';
import { createApp } from './app';

async function main() {
  const config = loadConfig();
  requireRuntime(config);
  const log = createLogger(config.logLevel, 'api');
  const ds = await createDataSource(config.databaseUrl, { applicationName: 'tarmac-api' }).initialize();
  const temporal = await connectClient(config);
  const app = createApp({ config, ds, temporal, blobs: new FsBlobStore(config.blobDir), box: new SecretBox(config.secretsKey), log });
  const server = http.createServer(app.callback());
  server.requestTimeout = 0; // uploads and SSE streams may be long; sockets still time out when idle
  await new Promise<void>((resolve) => server.listen(config.port, config.host, resolve));
  log.info({ url: config.publicBaseUrl, port: config.port }, 'api listening');

  await runUntilSignal(log, async () => {
    // Stop accepting, let in-flight requests finish (bounded), then close connections.
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
      setTimeout(() => { server.closeAllConnections(); resolve(); }, config.shutdownGraceMs).unref();
    });
    await temporal.connection.close();
    await ds.destroy();
  });
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
