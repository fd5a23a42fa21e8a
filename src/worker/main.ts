// Entry point of a worker process (`npm run worker`).
import { DefaultLogger, NativeConnection, Runtime, makeTelemetryFilterString } from '@temporalio/worker';
import { loadConfig, requireRuntime, temporalAddress } from '../config';
import { createLogger } from '../logger';
import { createDataSource } from '../persistence/data-source';
import { connectClient, ensureSearchAttributes } from '../temporal/connection';
import { ensureSchedule, SCHEDULES } from '../temporal/schedules';
import { Sandbox } from '../runtime/sandbox/sandbox';
import { setSpawnMode } from '../runtime/process/spawn';
import { activityDepsFor, createWorker } from './create-worker';

async function main() {
  const config = loadConfig();
  requireRuntime(config);
  const log = createLogger(config.logLevel, 'worker');
  // The SDK's own logger would print webpack bundle stats at INFO on every start.
  Runtime.install({
    logger: new DefaultLogger('WARN'),
    telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'WARN' }) } },
  });

  const client = await connectClient(config);
  if (config.temporal.address) await ensureSearchAttributes(client, log);
  for (const schedule of SCHEDULES) await ensureSchedule(client, schedule, config.temporal.taskQueue, log);
  const ds = await createDataSource(config.databaseUrl, {
    applicationName: 'tarmac-worker',
    poolSize: config.databasePoolSize,
  }).initialize();
  // Before polling: a worker that cannot isolate user code must not take any (SANDBOX, docs/security.md).
  setSpawnMode(config.sandbox.spawner === 'inline' ? 'inline' : 'spawner');
  const sandbox = await Sandbox.open(config.sandbox, { log, apiBaseUrl: config.runProcess.apiBaseUrl });
  const connection = await NativeConnection.connect({ address: temporalAddress(config) });
  const worker = await createWorker({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    deps: activityDepsFor(config, { ds, temporal: client, log, sandbox }),
    shutdownGraceTime: config.shutdownGraceMs,
  });
  // Names and URLs only: keys never reach the log.
  const providers = Object.entries(config.models.providers).map(([name, p]) => `${name}=${p.baseUrl}`);
  log.info(
    { providers, defaultModel: config.models.defaultModel ?? null },
    providers.length ? 'model providers' : 'no model provider configured (MODEL_PROVIDERS, DEFAULT_MODEL)',
  );
  log.info({ taskQueue: config.temporal.taskQueue, address: temporalAddress(config) }, 'worker polling');
  // Worker.run() installs its own SIGINT/SIGTERM handling: it stops polling and drains in-flight tasks.
  await worker.run();
  await sandbox.close();
  await connection.close();
  await client.connection.close();
  await ds.destroy();
  log.info('worker stopped');
}

main().catch((err) => {
  console.error(err instanceof Error ? err.stack : err);
  process.exit(1);
});
