// A worker process for drills that kill it: workflows and activities, configured by the environment like
// `npm run worker` (src/worker/main.ts), with the same createWorker. Two differences, both for speed and
// isolation: the workflow code comes from a prebuilt bundle (argv[2]) instead of being bundled at start,
// and it does not create the reconciler schedule. A versioned worker (WORKER_BUILD_ID) promotes itself as
// the worker's does on a first install. Prints "ready" once it polls. Traces and metrics as the worker's
// (OTEL_EXPORTER_OTLP_ENDPOINT: the bundle must include WORKFLOW_TRACING_MODULES; WORKER_METRICS_PORT).
import { stopSpawner } from '../../src/runtime/process/spawn';
import { DefaultLogger, makeTelemetryFilterString, NativeConnection, Runtime } from '@temporalio/worker';
import { loadConfig, requireRuntime, temporalAddress } from '../../src/config';
import { createLogger } from '../../src/logger';
import { createDataSource } from '../../src/persistence/data-source';
import { RunUpdatesHub } from '../../src/persistence/run-updates-hub';
import { connectClient } from '../../src/temporal/connection';
import { Sandbox } from '../../src/runtime/sandbox/sandbox';
import { activityDepsFor, createWorker } from '../../src/worker/create-worker';
import { promoteFirstVersion } from '../../src/temporal/worker-versioning';
import { startProcessMetrics } from '../../src/observability/metrics';
import { forwardedMetrics, freeLoopbackAddress, startMetricsServer } from '../../src/observability/metrics-server';
import { startTracing } from '../../src/observability/tracing';

async function main() {
  const bundlePath = process.argv[2];
  if (!bundlePath) throw new Error('usage: worker.js <workflow bundle file>');
  const config = loadConfig();
  requireRuntime(config);
  const log = createLogger(config.logLevel, 'drill-worker');
  const tracing = startTracing({ endpoint: config.otlpEndpoint, serviceName: 'tarmac-worker' });
  const sdkMetrics = config.metrics.workerPort === undefined ? undefined : await freeLoopbackAddress();
  Runtime.install({
    logger: new DefaultLogger('ERROR'),
    telemetryOptions: {
      logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }) },
      ...(sdkMetrics ? { metrics: { prometheus: { bindAddress: sdkMetrics } } } : {}),
    },
  });
  const client = await connectClient(config);
  const ds = await createDataSource(config.databaseUrl, {
    poolSize: config.databasePoolSize,
    applicationName: 'tarmac-drill-worker',
  }).initialize();
  startProcessMetrics(ds);
  const runUpdates = new RunUpdatesHub(config.databaseUrl, log, 'tarmac-worker-listen');
  await runUpdates.start();
  const metricsServer =
    config.metrics.workerPort === undefined
      ? undefined
      : await startMetricsServer({
          port: config.metrics.workerPort,
          host: '127.0.0.1',
          token: config.metrics.token,
          extra: sdkMetrics ? forwardedMetrics(sdkMetrics) : undefined,
          log,
        });
  const sandbox = await Sandbox.open(config.sandbox, {
    log,
    apiBaseUrl: config.runProcess.apiBaseUrl,
    reach: [config.codehostBaseUrl],
  });
  const connection = await NativeConnection.connect({ address: temporalAddress(config) });
  const worker = await createWorker({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    deps: activityDepsFor(config, { ds, temporal: client, log, sandbox, runUpdates }),
    workflowBundle: { codePath: bundlePath },
    shutdownGraceTime: config.shutdownGraceMs,
    tracing,
  });
  const running = worker.run();
  // As src/worker/main.ts: a versioned worker of a deployment with no current version makes its own current.
  await promoteFirstVersion(client, config, log);
  console.log('ready');
  await running;
  await stopSpawner();
  await sandbox.close();
  await connection.close();
  await client.connection.close();
  await runUpdates.close();
  await ds.destroy();
  metricsServer?.close();
  await tracing?.shutdown();
}

main().catch((err) => {
  console.error(err instanceof Error ? err.stack : err);
  process.exit(1);
});
