// Waiting until a service can be used: Temporal answers for the namespace, the api's GET /ready answers
// 200, the worker polls its task queue. Each wait gives up with an error that says what it last saw,
// fails at once when the server it waits for has exited, and stops waiting (Stopped) once a shutdown began.
import { Connection } from '@temporalio/client';
import { temporalConnectionOptions, type Config } from '../../config';
import type { Child } from './children';
import { seconds } from './output';
import { Stopped } from './running';

const READY_TIMEOUT_MS = 120_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function waitForTemporal(
  address: string,
  namespace: string,
  timeoutMs: number,
  server: Child | undefined,
  isStopping: () => boolean,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer yet';
  while (Date.now() < deadline) {
    if (isStopping()) throw new Stopped();
    if (server && !server.running)
      throw new Error('the Temporal dev server exited while starting (see its output above)');
    try {
      const connection = await Connection.connect({ address, connectTimeout: 2000 });
      try {
        await connection.workflowService.describeNamespace({ namespace });
        return;
      } finally {
        await connection.close();
      }
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
      await sleep(300);
    }
  }
  throw new Error(
    `Temporal did not accept connections on ${address} (namespace ${namespace}) within ${seconds(timeoutMs)}.\n` +
      `Last error: ${last}`,
  );
}

export async function waitForApi(config: Config, isStopping: () => boolean): Promise<void> {
  const host = ['0.0.0.0', '::', ''].includes(config.host) ? '127.0.0.1' : config.host;
  await waitFor200(`http://${host.includes(':') ? `[${host}]` : host}:${config.port}/ready`, 'the api', isStopping);
}

/** The local embedding server is ready once its model is loaded and it listens. */
export async function waitForEmbeddings(config: Config, isStopping: () => boolean): Promise<void> {
  await waitFor200(`http://127.0.0.1:${config.localEmbeddings.port}/health`, 'the local embedding server', isStopping);
}

async function waitFor200(url: string, what: string, isStopping: () => boolean): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last = 'no answer yet';
  while (Date.now() < deadline) {
    if (isStopping()) throw new Stopped();
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (res.status === 200) return;
      last = `${res.status} ${await res.text()}`;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    await sleep(300);
  }
  throw new Error(`${what} did not answer 200 on ${url} within ${seconds(READY_TIMEOUT_MS)}. Last: ${last}`);
}

/** The worker is ready once Temporal lists it (by its identity, `<pid>@<host>`) among the task queue's pollers. */
export async function waitForWorker(
  address: string,
  config: Config,
  pid: number,
  isStopping: () => boolean,
): Promise<void> {
  const connection = await Connection.connect({ ...temporalConnectionOptions(config), address });
  try {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    while (Date.now() < deadline) {
      if (isStopping()) throw new Stopped();
      const res = await connection.workflowService.describeTaskQueue({
        namespace: config.temporal.namespace,
        taskQueue: { name: config.temporal.taskQueue },
        taskQueueType: 1, // TASK_QUEUE_TYPE_WORKFLOW
      });
      if ((res.pollers ?? []).some((p) => p.identity?.startsWith(`${pid}@`))) return;
      await sleep(300);
    }
    throw new Error(
      `the worker did not poll task queue ${config.temporal.taskQueue} within ${seconds(READY_TIMEOUT_MS)}`,
    );
  } finally {
    await connection.close();
  }
}
