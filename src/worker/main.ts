// Entry point of a worker process (`npm run worker`).
import { DefaultLogger, NativeConnection, Runtime, makeTelemetryFilterString } from '@temporalio/worker';
import { loadConfig, requireRuntime, temporalAddress, temporalConnectionOptions } from '../config';
import { createLogger } from '../logger';
import { createDataSource } from '../persistence/data-source';
import { RunUpdatesHub } from '../persistence/run-updates-hub';
import { connectClient, ensureSearchAttributes } from '../temporal/connection';
import { ensureSchedule, SCHEDULES } from '../temporal/schedules';
import { promoteFirstVersion, versionName, workerVersionOf } from '../temporal/worker-versioning';
import { Sandbox, SandboxUnavailable } from '../runtime/sandbox/sandbox';
import { setSpawnMode, stopSpawner } from '../runtime/process/spawn';
import { activityDepsFor, createWorker } from './create-worker';
import { startProcessMetrics } from '../observability/metrics';
import { forwardedMetrics, freeLoopbackAddress, startMetricsServer } from '../observability/metrics-server';
import { startTracing } from '../observability/tracing';
import { removeSpoolsOfGoneWorkers } from '../services/knowledge/documents/xlsx-reader';

async function main() {
  const config = loadConfig();
  requireRuntime(config);
  const log = createLogger(config.logLevel, 'worker');
  const tracing = startTracing({ endpoint: config.otlpEndpoint, serviceName: 'tarmac-worker' });
  // With WORKER_METRICS_PORT, the SDK's core exports its worker metrics (task slots, poll latencies, ...) in
  // Prometheus format on its own loopback address, which our /metrics forwards on each scrape.
  const metricsOn = config.metrics.workerPort !== undefined;
  const sdkMetrics = metricsOn ? (config.metrics.temporalAddress ?? (await freeLoopbackAddress())) : undefined;
  // The SDK's own logger would print webpack bundle stats at INFO on every start.
  Runtime.install({
    logger: new DefaultLogger('WARN'),
    telemetryOptions: {
      logging: { filter: makeTelemetryFilterString({ core: 'WARN' }) },
      ...(sdkMetrics ? { metrics: { prometheus: { bindAddress: sdkMetrics } } } : {}),
    },
  });

  const client = await connectClient(config);
  if (config.temporal.address) await ensureSearchAttributes(client, log);
  for (const schedule of SCHEDULES) await ensureSchedule(client, schedule, config.temporal.taskQueue, log);
  const ds = await createDataSource(config.databaseUrl, {
    applicationName: 'tarmac-worker',
    poolSize: config.databasePoolSize,
  }).initialize();
  startProcessMetrics(ds);
  const runUpdates = new RunUpdatesHub(config.databaseUrl, log, 'tarmac-worker-listen');
  await runUpdates.start();
  const metricsServer =
    config.metrics.workerPort === undefined
      ? undefined
      : await startMetricsServer({
          port: config.metrics.workerPort,
          host: config.host,
          token: config.metrics.token,
          extra: sdkMetrics ? forwardedMetrics(sdkMetrics) : undefined,
          log,
        });
  // Before polling: a worker that cannot isolate user code must not take any (SANDBOX, docs/security.md).
  setSpawnMode(config.sandbox.spawner === 'inline' ? 'inline' : 'spawner');
  const sandbox = await Sandbox.open(config.sandbox, {
    log,
    apiBaseUrl: config.runProcess.apiBaseUrl,
    reach: [config.codehostBaseUrl],
  });
  const spools = await removeSpoolsOfGoneWorkers();
  if (spools) log.info({ spools }, 'removed the spreadsheet spools of workers that are gone');
  const connection = await NativeConnection.connect(temporalConnectionOptions(config));
  const worker = await createWorker({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    deps: activityDepsFor(config, { ds, temporal: client, log, sandbox, runUpdates }),
    shutdownGraceTime: config.shutdownGraceMs,
    tracing,
  });
  // Names and URLs only: keys never reach the log.
  const providers = Object.entries(config.models.providers).map(([name, p]) => `${name}=${p.baseUrl}`);
  log.info(
    { providers, defaultModel: config.models.defaultModel ?? null },
    providers.length ? 'model providers' : 'no model provider configured (MODEL_PROVIDERS, DEFAULT_MODEL)',
  );
  const version = workerVersionOf(config);
  log.info(
    {
      taskQueue: config.temporal.taskQueue,
      address: temporalAddress(config),
      version: version ? versionName(version) : 'unversioned',
    },
    'worker polling',
  );
  // Worker.run() installs its own SIGINT/SIGTERM handling: it stops polling and drains in-flight tasks.
  const running = worker.run();
  // A version exists for Temporal once it polls: then the first install's version becomes current.
  if (version) await promoteFirstVersion(client, config, log);
  await running;
  await stopSpawner();
  await sandbox.close();
  await connection.close();
  await client.connection.close();
  await runUpdates.close();
  await ds.destroy();
  metricsServer?.close();
  await tracing?.shutdown();
  log.info('worker stopped');
}

main().catch((err) => {
  // A host that cannot isolate user code is a setup problem, said plainly (the message says what to do).
  console.error(err instanceof SandboxUnavailable ? err.message : err instanceof Error ? err.stack : err);
  process.exit(1);
});
