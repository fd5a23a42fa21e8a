// Temporal: the server api and worker connect to, or the local dev server `npm start` runs.
import type { EnvReader } from './env';

export interface TemporalSettings {
  temporal: {
    address: string | undefined;
    namespace: string;
    taskQueue: string;
    uiUrl: string | undefined;
    /** Ports of the local dev server that `npm start` runs when TEMPORAL_ADDRESS is unset. */
    devPort: number;
    devUiPort: number;
    cliPath: string | undefined;
    testServerPath: string | undefined;
  };
}

export function readTemporal(env: EnvReader): TemporalSettings {
  return {
    temporal: {
      address: env.optional('TEMPORAL_ADDRESS'),
      namespace: env.string('TEMPORAL_NAMESPACE', 'default'),
      taskQueue: env.string('TEMPORAL_TASK_QUEUE', 'tarmac'),
      uiUrl: env.url('TEMPORAL_UI_URL'),
      devPort: env.int('TEMPORAL_DEV_PORT', 7233, 1, 65535),
      devUiPort: env.int('TEMPORAL_DEV_UI_PORT', 8233, 1, 65535),
      cliPath: env.optional('TEMPORAL_CLI_PATH'),
      testServerPath: env.optional('TEMPORAL_TEST_SERVER_PATH'),
    },
  };
}

/** Temporal address the processes connect to: TEMPORAL_ADDRESS, else the local dev server. */
export function temporalAddress(config: TemporalSettings): string {
  return config.temporal.address ?? `127.0.0.1:${config.temporal.devPort}`;
}
