// An activity-only worker in a process of its own, configured by the environment (like `npm run worker`),
// for tests that kill a worker abruptly (SIGKILL) while it runs user code. Prints "ready" once polling.
import { DefaultLogger, makeTelemetryFilterString, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { createActivities } from '../../activities';
import { loadConfig, requireRuntime, temporalAddress } from '../../src/config';
import { createLogger } from '../../src/logger';
import { createDataSource } from '../../src/persistence/data-source';
import { Sandbox } from '../../src/runtime/sandbox/sandbox';
import { activityDepsFor } from '../../src/worker/create-worker';

async function main() {
  const config = loadConfig();
  requireRuntime(config);
  const log = createLogger(config.logLevel, 'test-activity-worker');
  Runtime.install({
    logger: new DefaultLogger('ERROR'),
    telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }) } },
  });
  const ds = await createDataSource(config.databaseUrl, {
    applicationName: 'tarmac-test-activity-worker',
  }).initialize();
  const sandbox = await Sandbox.open(config.sandbox, {
    log,
    apiBaseUrl: config.runProcess.apiBaseUrl,
    reach: [config.codehostBaseUrl],
  });
  const connection = await NativeConnection.connect({ address: temporalAddress(config) });
  const worker = await Worker.create({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    // No workflows: this process only executes activities (the test runs the workflows in-process).
    activities: createActivities(activityDepsFor(config, { ds, temporal: undefined as never, log, sandbox })),
    maxHeartbeatThrottleInterval: '1 second',
  });
  const running = worker.run();
  console.log('ready');
  await running;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
