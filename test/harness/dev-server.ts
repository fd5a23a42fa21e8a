// The Temporal dev server for tests: the pinned CLI (src/temporal/binaries.ts) with the platform's search
// attributes, as the stack runs it (test/harness/stack.ts) and as the kernel's unit tests start one of their own
// (test/unit/jobs/), with the bundle of their tiny workflows (test/harness/job-workflows.ts). The SDK gives the server 5 s to accept a connection (a constant of its core), which a
// machine under heavy load (CI running test files side by side, a bench) can miss: it kills the server then,
// and another is started, up to three times.
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, DefaultLogger, makeTelemetryFilterString, Runtime } from '@temporalio/worker';
import type { Config } from '../../src/config';
import { temporalCli } from '../../src/temporal/binaries';
import { SEARCH_ATTRIBUTES } from '../../src/temporal/search-attributes';

export async function devServerEnvironment(config: Config): Promise<TestWorkflowEnvironment> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await TestWorkflowEnvironment.createLocal({
        server: { executable: temporalCli(config), searchAttributes: SEARCH_ATTRIBUTES, ui: false },
      });
    } catch (err) {
      if (attempt >= 3 || !/did not start within/.test((err as Error).message)) throw err;
      console.warn(`the Temporal dev server did not start within the SDK's 5 s (attempt ${attempt}); starting another`);
    }
  }
}

/**
 * The SDK's runtime logging warnings only, installed once per process (a mocha worker runs several files);
 * before the first connection, which would install the default one (logging every worker's start at INFO).
 */
export function quietRuntime(): void {
  try {
    Runtime.install({
      logger: new DefaultLogger('WARN'),
      telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }) } },
    });
  } catch {
    // installed already, by an earlier file of this process
  }
}

let bundled: ReturnType<typeof bundleWorkflowCode> | undefined;

/**
 * The kernel tests' workflows (./job-workflows.ts), bundled for a worker of a test's own, once per process (a
 * mocha worker that runs two such files bundles once: 3 to 5 s here); webpack says only errors.
 */
export const jobWorkflowBundle = () =>
  (bundled ??= bundleWorkflowCode({
    workflowsPath: require.resolve('./job-workflows'),
    logger: {
      trace: () => undefined,
      debug: () => undefined,
      info: () => undefined,
      warn: () => undefined,
      log: () => undefined,
      error: (m: string, meta?: unknown) => console.error(m, meta ?? ''),
    },
  }));
