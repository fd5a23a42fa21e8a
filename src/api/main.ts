// Entry point of an api process (`npm run api`).
import http from 'node:http';
import { createBlobStore } from '../blobs/create-blob-store';
import { loadConfig, requireRuntime } from '../config';
import { createLogger } from '../logger';
import { createDataSource } from '../persistence/data-source';
import { SecretBox } from '../security/secret-box';
import { connectClient } from '../temporal/connection';
import { runUntilSignal } from '../process-lifecycle';
import { createApp } from './app';
import { RunUpdatesHub } from '../persistence/run-updates-hub';
import { startProcessMetrics } from '../observability/metrics';
import { startQueueMetrics } from '../jobs/metric';
import { startTracing } from '../observability/tracing';

async function main() {
  const config = loadConfig();
  requireRuntime(config);
  const log = createLogger(config.logLevel, 'api');
  // Before the Temporal client is made: its interceptors follow whether tracing is on.
  const tracing = startTracing({ endpoint: config.otlpEndpoint, serviceName: 'tarmac-api' });
  const ds = await createDataSource(config.databaseUrl, {
    applicationName: 'tarmac-api',
    poolSize: config.databasePoolSize,
  }).initialize();
  startProcessMetrics(ds);
  startQueueMetrics(ds);
  const temporal = await connectClient(config);
  const runUpdates = new RunUpdatesHub(config.databaseUrl, log);
  await runUpdates.start();
  const app = createApp({
    config,
    ds,
    temporal,
    blobs: createBlobStore(config),
    box: new SecretBox(config.secretsKey),
    log,
    runUpdates,
  });
  const server = http.createServer(app.callback());
  server.requestTimeout = 0; // uploads and SSE streams may be long; sockets still time out when idle
  await new Promise<void>((resolve) => server.listen(config.port, config.host, resolve));
  log.info({ url: config.publicBaseUrl, port: config.port }, 'api listening');

  await runUntilSignal(log, async () => {
    // Stop accepting, let in-flight requests finish (bounded), then close connections. Event streams are
    // ended (hub closed) so that they do not hold the server open for the whole grace period.
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      void runUpdates.close();
      server.closeIdleConnections();
      setTimeout(() => {
        server.closeAllConnections();
        resolve();
      }, config.shutdownGraceMs).unref();
    });
    await temporal.connection.close();
    await ds.destroy();
    await tracing?.shutdown();
  });
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
