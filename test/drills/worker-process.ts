// A worker process for drills that kill it: workflows and activities, configured by the environment like
// `npm run worker` (src/worker/main.ts), with the same createWorker. Two differences, both for speed and
// isolation: the workflow code comes from a prebuilt bundle (argv[2]) instead of being bundled at start,
// and it does not create the reconciler schedule. Prints "ready" once it polls.
import { DefaultLogger, makeTelemetryFilterString, NativeConnection, Runtime } from '@temporalio/worker';
import { loadConfig, requireRuntime, temporalAddress } from '../../src/config';
import { createLogger } from '../../src/logger';
import { createDataSource } from '../../src/persistence/data-source';
import { connectClient } from '../../src/temporal/connection';
import { Sandbox } from '../../src/runtime/sandbox/sandbox';
import { activityDepsFor, createWorker } from '../../src/worker/create-worker';

async function main() {
  const bundlePath = process.argv[2];
  if (!bundlePath) throw new Error('usage: worker.js <workflow bundle file>');
  const config = loadConfig();
  requireRuntime(config);
  const log = createLogger(config.logLevel, 'drill-worker');
  Runtime.install({
    logger: new DefaultLogger('ERROR'),
    telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }) } },
  });
  const client = await connectClient(config);
  const ds = await createDataSource(config.databaseUrl, {
    poolSize: config.databasePoolSize,
    applicationName: 'tarmac-drill-worker',
  }).initialize();
  const sandbox = await Sandbox.open(config.sandbox, { log, apiBaseUrl: config.runProcess.apiBaseUrl });
  const connection = await NativeConnection.connect({ address: temporalAddress(config) });
  const worker = await createWorker({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    deps: activityDepsFor(config, { ds, temporal: client, log, sandbox }),
    workflowBundle: { codePath: bundlePath },
    shutdownGraceTime: config.shutdownGraceMs,
  });
  const running = worker.run();
  console.log('ready');
  await running;
  await sandbox.close();
  await connection.close();
  await client.connection.close();
  await ds.destroy();
}

main().catch((err) => {
  console.error(err instanceof Error ? err.stack : err);
  process.exit(1);
});
