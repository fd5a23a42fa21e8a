// The Java time-skipping test server, started by the harness rather than by the SDK: the SDK's own start
// gives the server 5 s to accept connections, which a JVM on a loaded 2-core machine misses now and then
// (every time-skipping test of a file then fails in its hook). Here it gets a minute, and a test environment
// is made on it as the SDK makes one on a server it started (started as the SDK starts it: without
// --enable-time-skipping, so time is locked until a client waits on a result, as @temporalio/testing expects).
import { spawn } from 'node:child_process';
import net from 'node:net';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { temporalTestServer } from '../../src/temporal/binaries';
import { freePort } from './ports';

const START_WITHIN_MS = 60_000;

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

/** A time-skipping environment on a test server of its own; `teardown` also stops the server. */
export async function timeSkippingEnvironment(
  executable: ReturnType<typeof temporalTestServer>,
): Promise<TestWorkflowEnvironment> {
  if (executable.type !== 'existing-path') return TestWorkflowEnvironment.createTimeSkipping();
  const port = await freePort();
  const server = spawn(executable.path, [String(port)], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));
  const stop = async () => {
    if (server.exitCode === null && server.signalCode === null) server.kill('SIGKILL');
    await exited;
  };
  try {
    const deadline = Date.now() + START_WITHIN_MS;
    while (!(await accepts(port))) {
      if (server.exitCode !== null) throw new Error(`the time-skipping test server exited with ${server.exitCode}`);
      if (Date.now() > deadline)
        throw new Error(`the time-skipping test server did not start within ${START_WITHIN_MS} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
    // What createTimeSkipping does, on a server already running (the SDK keeps this variant private).
    const create = (
      TestWorkflowEnvironment as unknown as {
        create(opts: object): Promise<TestWorkflowEnvironment>;
      }
    ).create.bind(TestWorkflowEnvironment);
    const env = await create({
      server: { type: 'existing' },
      address: `127.0.0.1:${port}`,
      supportsTimeSkipping: true,
    });
    const teardown = env.teardown.bind(env);
    env.teardown = async () => {
      await teardown();
      await stop();
    };
    return env;
  } catch (err) {
    await stop();
    throw err;
  }
}
