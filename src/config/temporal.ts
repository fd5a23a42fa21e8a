// Temporal: the server api and worker connect to, or the local dev server `npm start` runs.
import fs from 'node:fs';
import type { TLSConfig } from '@temporalio/common/lib/internal-non-workflow/tls-config';
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
    /** Workflow stack traces for the stack trace query (the Temporal UI's Stack Trace tab): ~9 ms of CPU per run. */
    workflowStackTraces: boolean;
    /**
     * Worker Versioning (docs/production.md, Upgrades): with a build id the worker polls as version
     * `<deploymentName>:<buildId>` of a Worker Deployment, and a workflow stays on the build that started it
     * (PINNED); unset, the worker is unversioned (`npm start`).
     */
    workerBuildId: string | undefined;
    workerDeploymentName: string;
    /**
     * TLS to the frontend (a cluster with TLS, Temporal Cloud): undefined: plaintext. The files are read when
     * a process connects (temporalConnectionOptions), so a renewed certificate is taken on the next start.
     */
    tls:
      | {
          /** PEM of the client's certificate and key (mTLS); both or neither. */
          clientCertFile: string | undefined;
          clientKeyFile: string | undefined;
          /** PEM of the CA that signed the server's certificate; unset: the system's roots. */
          serverCaFile: string | undefined;
          /** The name the server's certificate must carry, when it differs from the address's host. */
          serverName: string | undefined;
        }
      | undefined;
    /** TEMPORAL_API_KEY: a Temporal Cloud API key, sent as a bearer token (implies TLS). */
    apiKey: string | undefined;
  };
}

/** What a version's names may be: the deployment name may not hold `.`, Temporal's separator of the two. */
const BUILD_ID = /^[\x21-\x7e]{1,255}$/;
const DEPLOYMENT_NAME = /^[\x21-\x2d\x2f-\x7e]{1,255}$/;

export function readTemporal(env: EnvReader): TemporalSettings {
  const buildId = env.optional('WORKER_BUILD_ID');
  if (buildId !== undefined && !BUILD_ID.test(buildId))
    env.problem(`WORKER_BUILD_ID must be 1-255 printable characters without spaces, got ${JSON.stringify(buildId)}`);
  const deploymentName = env.string('WORKER_DEPLOYMENT_NAME', 'tarmac');
  if (!DEPLOYMENT_NAME.test(deploymentName))
    env.problem(
      `WORKER_DEPLOYMENT_NAME must be 1-255 printable characters without spaces or ".", got ${JSON.stringify(deploymentName)}`,
    );
  const clientCertFile = env.optional('TEMPORAL_TLS_CERT_FILE');
  const clientKeyFile = env.optional('TEMPORAL_TLS_KEY_FILE');
  if ((clientCertFile === undefined) !== (clientKeyFile === undefined))
    env.problem('TEMPORAL_TLS_CERT_FILE and TEMPORAL_TLS_KEY_FILE go together (a client certificate and its key)');
  const serverCaFile = env.optional('TEMPORAL_TLS_CA_FILE');
  const serverName = env.optional('TEMPORAL_TLS_SERVER_NAME');
  const apiKey = env.optional('TEMPORAL_API_KEY');
  const tlsOn = env.bool('TEMPORAL_TLS', Boolean(clientCertFile || serverCaFile || serverName || apiKey));
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
      workflowStackTraces: env.bool('TEMPORAL_WORKFLOW_STACK_TRACES', false),
      workerBuildId: buildId,
      workerDeploymentName: deploymentName,
      tls: tlsOn ? { clientCertFile, clientKeyFile, serverCaFile, serverName } : undefined,
      apiKey,
    },
  };
}

/** What the client and the worker connect to Temporal with: the address, TLS and the API key. */
export function temporalConnectionOptions(config: TemporalSettings): {
  address: string;
  tls?: TLSConfig | false;
  apiKey?: string;
} {
  const { tls, apiKey } = config.temporal;
  const read = (file: string | undefined) => (file === undefined ? undefined : fs.readFileSync(file));
  const crt = read(tls?.clientCertFile);
  const key = read(tls?.clientKeyFile);
  const ca = read(tls?.serverCaFile);
  return {
    address: temporalAddress(config),
    ...(tls
      ? {
          tls: {
            ...(crt && key ? { clientCertPair: { crt, key } } : {}),
            ...(ca ? { serverRootCACertificate: ca } : {}),
            ...(tls.serverName ? { serverNameOverride: tls.serverName } : {}),
          },
        }
      : {}),
    ...(apiKey ? { apiKey } : {}),
  };
}

/** Temporal address the processes connect to: TEMPORAL_ADDRESS, else the local dev server. */
export function temporalAddress(config: TemporalSettings): string {
  return config.temporal.address ?? `127.0.0.1:${config.temporal.devPort}`;
}

/**
 * Hands the stack trace setting to the Temporal SDK's workflow threads, which read it from the environment as
 * they start (patches/@temporalio+worker+*.patch): call before creating the worker.
 */
export function exportWorkflowStackTraces(config: TemporalSettings): void {
  process.env.TEMPORAL_WORKFLOW_STACK_TRACES = String(config.temporal.workflowStackTraces);
}
