// The real stack for tests: embedded PostgreSQL, the Temporal CLI dev server, a worker and the api,
// started once per mocha run (see hooks.ts). Tests talk to the api over HTTP like any client.
//
// Models: the stack runs one local OpenAI-compatible provider (model-provider.ts), `getStack().modelProvider`,
// configured as MODEL_PROVIDERS=local=<its baseUrl> with DEFAULT_MODEL=local/test-model and
// DEFAULT_EMBEDDING_MODEL=local/test-embedding (its embeddings are a hashed bag of words), and no OPENAI_API_KEY
// (so nothing reaches a real provider). A test takes a model name of its own, `provider.uniqueModel()`, uses it as
// `local/<name>` (e.g. an assistant's model) and scripts replies for `<name>`: tests never take each other's
// replies, even when their runs overlap. Requests for `test-model` (runs without a model) are unscripted, so
// they fail `rejected` unless a test scripts that name; such a script also names what its run asks (`asked`),
// so that a run another test left behind never takes it.
//
// Outside providers: a local code host (codehost.ts: OAuth token endpoint and private git over HTTP,
// `getStack().codehost`) as CODEHOST_OAUTH_*, and a local Stripe (stripe-double.ts, `getStack().stripe`) as
// BILLING_* with the webhook secret `getStack().billingWebhookSecret`. CODEHOST_BASE_URL stays file:// (public
// repositories); tests that clone over HTTP run a worker of their own with the code host's URL.
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';
import type { Client } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import {
  bundleWorkflowCode,
  DefaultLogger,
  Runtime,
  makeTelemetryFilterString,
  WorkflowBundleWithSourceMap,
} from '@temporalio/worker';
import type { DataSource } from 'typeorm';
import type { ActivityDeps } from '../../activities';
import { createApp } from '../../src/api/app';
import { RunUpdatesHub } from '../../src/persistence/run-updates-hub';
import { FsBlobStore } from '../../src/blobs/fs-blob-store';
import { Config, loadConfig } from '../../src/config';
import { startEmbeddedPostgres, RunningPostgres } from '../../src/cli/postgres/embedded-postgres';
import { createLogger } from '../../src/logger';
import { createDataSource, migrate } from '../../src/persistence/data-source';
import type { SecretBox } from '../../src/security/secret-box';
import { temporalTestServer } from '../../src/temporal/binaries';
import { SEARCH_ATTRIBUTES } from '../../src/temporal/search-attributes';
import { stopSpawner } from '../../src/runtime/process/spawn';
import { Sandbox } from '../../src/runtime/sandbox/sandbox';
import { joinPlatformGroup } from '../../src/runtime/sandbox/cgroups';
import { activityDepsFor, createWorker, WORKFLOWS_PATH } from '../../src/worker/create-worker';
import { bootstrapOrganization } from '../../src/services/accounts/accounts';
import { startModelProvider, ModelProvider } from './model-provider';
import { Codehost, startCodehost } from './codehost';
import { startStripeDouble, StripeDouble } from './stripe-double';
import { ChatAppDouble, startChatAppDouble } from './chatapp-double';
import { startDriveProvider, type DriveProvider } from './drive-provider';
import { startWikiProvider, type WikiProvider } from './wiki-provider';
import { CodehostAppDouble, startCodehostAppDouble } from './codehost-app-double';
import { devServerEnvironment } from './dev-server';
import { timeSkippingEnvironment } from './time-skipping-server';

export interface Stack {
  config: Config;
  baseUrl: string;
  ds: DataSource;
  env: TestWorkflowEnvironment;
  box: SecretBox;
  workflowBundle: WorkflowBundleWithSourceMap;
  /** What the stack's worker gives its activities; reused by time-skipping workers. */
  activityDeps: ActivityDeps;
  /** CODEHOST_BASE_URL of the stack (file://): a repository `<codehostDir>/<owner>/<name>.git` is a codehost source. */
  codehostDir: string;
  /** The local model provider `local` of the stack's worker (see the header comment). */
  modelProvider: ModelProvider;
  /** The code host of CODEHOST_OAUTH_* (its git side serves `codehostDir`, privately). */
  codehost: Codehost;
  /** The payment provider of BILLING_*; events for the api are signed with `billingWebhookSecret`. */
  stripe: StripeDouble;
  billingWebhookSecret: string;
  /** The chat app's Web API (CHATAPP_API_BASE_URL) and the code host's app API (CODEHOST_API_BASE_URL). */
  chatApp: ChatAppDouble;
  /** The drive (DRIVE_*) and wiki (WIKI_BASE_URL) of data connectors. */
  drive: DriveProvider;
  wiki: WikiProvider;
  codehostApp: CodehostAppDouble;
}

let stack: Stack | undefined;
/** The environment the stack's configuration was read from (configWith). */
let stackEnv: Record<string, string | undefined> = {};
const stops: Array<() => Promise<unknown>> = [];

export function getStack(): Stack {
  if (!stack) throw new Error('stack not started (test/support/hooks.ts)');
  return stack;
}

/**
 * Where the outside doubles the platform reaches on a tenant's behalf (webscraper sites, objstore endpoints)
 * listen: a loopback address apart from the platform's own services (127.0.0.1), the one range the stack's
 * OUTBOUND_ALLOW opens besides single host:port pairs.
 */
export const OUTSIDE_HOST = '127.0.0.2';

import { freePort } from './ports';

export { freePort };

/**
 * `env` overrides the settings below (the benchmarks use production SSE keep-alives, for instance).
 * `inProcess: false` starts no worker and no api in this process (the benchmarks' production shape runs
 * them as processes of their own, see bench/support/production.ts); `baseUrl` then answers nothing.
 */
export async function startStack(opts: { env?: Record<string, string>; inProcess?: boolean } = {}): Promise<Stack> {
  Runtime.install({
    logger: new DefaultLogger('WARN'),
    telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }) } },
  });
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tarmac-test-'));
  fs.chmodSync(root, 0o755); // the local PostgreSQL runs as its own OS user when we are root
  stops.push(async () => fs.rmSync(root, { recursive: true, force: true }));

  const modelProvider = await startModelProvider();
  stops.unshift(() => modelProvider.close());
  const codehost = await startCodehost({ root: path.join(root, 'codehost') });
  stops.unshift(() => codehost.close());
  const stripe = await startStripeDouble();
  stops.unshift(() => stripe.close());
  const billingWebhookSecret = `whsec_${Math.random().toString(36).slice(2)}`;
  const [chatApp, codehostApp, drive, wiki] = await Promise.all([
    startChatAppDouble(),
    startCodehostAppDouble(),
    startDriveProvider(),
    startWikiProvider(),
  ]);
  stops.unshift(
    () => chatApp.close(),
    () => codehostApp.close(),
    () => drive.close(),
    () => wiki.close(),
  );

  const apiPort = await freePort();
  const testDatabaseUrl = process.env.TEST_DATABASE_URL;
  const pgPort = testDatabaseUrl ? Number(new URL(testDatabaseUrl).port || 5432) : await freePort();
  const pgHost = testDatabaseUrl ? new URL(testDatabaseUrl).hostname : 'localhost';
  stackEnv = {
    ...process.env,
    PORT: String(apiPort),
    PUBLIC_BASE_URL: `http://127.0.0.1:${apiPort}`,
    DATA_DIR: root,
    SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'),
    TEMPORAL_TASK_QUEUE: 'tarmac-test',
    CODEHOST_BASE_URL: `file://${path.join(root, 'codehost')}`,
    SSE_KEEPALIVE_MS: '300', // so that a test sees keep-alive comments without waiting 15 s
    RUN_LOG_GRACE_SECONDS: '6', // so that a test of lost output (test/api/out-of-space.test.ts) waits seconds, not minutes
    MODEL_PROVIDERS: `local=${modelProvider.baseUrl}`,
    DEFAULT_MODEL: 'local/test-model',
    DEFAULT_EMBEDDING_MODEL: 'local/test-embedding',
    // The compat suite's scripted model takes images (test/compat/test_griptape_chat_media.py); others text only.
    MODEL_IMAGE_INPUT: 'local/compat-*',
    CHATAPP_API_BASE_URL: chatApp.baseUrl,
    DRIVE_OAUTH_TOKEN_URL: drive.settings().tokenUrl,
    DRIVE_API_BASE_URL: drive.settings().apiBaseUrl,
    DRIVE_DATA_CONNECTOR_CLIENT_ID: drive.settings().clientId,
    DRIVE_DATA_CONNECTOR_CLIENT_SECRET: drive.settings().clientSecret,
    DRIVE_OAUTH_REDIRECT_URI: drive.settings().redirectUri,
    WIKI_BASE_URL: wiki.settings().baseUrl,
    CODEHOST_API_BASE_URL: codehostApp.baseUrl,
    OPENAI_API_KEY: '',
    CODEHOST_OAUTH_BASE_URL: codehost.baseUrl,
    CODEHOST_OAUTH_CLIENT_ID: codehost.clientId,
    CODEHOST_OAUTH_CLIENT_SECRET: codehost.clientSecret,
    BILLING_API_BASE_URL: stripe.baseUrl,
    BILLING_SECRET_KEY: stripe.secretKey,
    BILLING_WEBHOOK_SECRET: billingWebhookSecret,
    BILLING_SUCCESS_URL: `http://127.0.0.1:${apiPort}/billing/done`,
    // On a tenant's behalf the platform reaches the outside doubles (OUTSIDE_HOST), the stack's PostgreSQL by
    // its name (pg_vector knowledge bases use it as their outside database) and the code host's git; every
    // other address of this host (127.0.0.1:<PostgreSQL> included) stays refused.
    OUTBOUND_ALLOW: `${OUTSIDE_HOST}/32,${pgHost}:${pgPort},${new URL(codehost.baseUrl).host}`,
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
    // Every test signs people in from 127.0.0.1: the stack's api counts no attempts (RATE_LIMITS is off too);
    // test/api/sign-in-limits.test.ts starts apis of its own with limits.
    SIGN_IN_RATE_LIMITS: 'off',
    ...opts.env,
  };
  const config = loadConfig(stackEnv);

  // The test process (the worker) and what it starts (PostgreSQL, Temporal) share the platform's CPU
  // weight, above that of the runs, as `npm start` does (src/runtime/sandbox/cgroups.ts).
  if (config.sandbox.mode === 'on') joinPlatformGroup(config.sandbox.platformCpuWeight);
  let databaseUrl = testDatabaseUrl;
  if (!databaseUrl) {
    const pg: RunningPostgres = await startEmbeddedPostgres({
      dir: path.join(root, 'postgres'),
      port: pgPort,
      database: 'tarmac_test',
      persistent: false,
      config,
    });
    stops.unshift(() => pg.stop());
    databaseUrl = pg.url;
  }
  const ds = await createDataSource(databaseUrl, { applicationName: 'tarmac-test' }).initialize();
  await migrate(ds);
  stops.unshift(() => ds.destroy());

  const [env, workflowBundle] = await Promise.all([
    devServerEnvironment(config),
    bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quietBundlerLogger }),
  ]);
  stops.unshift(() => env.teardown());

  const log = createLogger(config.logLevel, 'test-worker');
  // The code host over HTTP (deployment.private-clone.test.ts): git runs sandboxed, so the firewall lets it through.
  const sandbox = await Sandbox.open(config.sandbox, {
    log,
    apiBaseUrl: config.runProcess.apiBaseUrl,
    reach: [config.codehostBaseUrl, codehost.baseUrl],
  });
  stops.unshift(() => sandbox.close());
  stops.unshift(() => stopSpawner()); // after the worker, which is stopped first
  // The worker's LISTEN connection, as src/worker/main.ts opens one.
  const workerUpdates = new RunUpdatesHub(databaseUrl, log, 'tarmac-worker-listen');
  await workerUpdates.start();
  stops.unshift(() => workerUpdates.close());
  const activityDeps: ActivityDeps = activityDepsFor(config, {
    ds,
    temporal: env.client,
    log,
    sandbox,
    runUpdates: workerUpdates,
  });
  const { box } = activityDeps;
  if (opts.inProcess !== false) {
    const worker = await runningWorker(env, config, activityDeps, workflowBundle);
    stops.unshift(worker.close);
  }

  stack = {
    config,
    baseUrl: `http://127.0.0.1:${apiPort}`,
    ds,
    env,
    box,
    workflowBundle,
    activityDeps,
    codehostDir: path.join(root, 'codehost'),
    modelProvider,
    codehost,
    stripe,
    billingWebhookSecret,
    chatApp,
    drive,
    wiki,
    codehostApp,
  };
  if (opts.inProcess !== false) {
    const api = await startApi(env.client, apiPort);
    stops.unshift(api.close);
  }
  return stack;
}

/**
 * The stack's configuration read again with some variables changed: for an api of a test's own (startApi) with
 * other settings, since the stack's configuration is frozen (src/config) and shared by everything it runs.
 */
export function configWith(overrides: Record<string, string>): Config {
  getStack();
  return loadConfig({ ...stackEnv, ...overrides });
}

/**
 * An api process (in-process Koa app) on the stack's database, talking to the given Temporal client. Like a
 * real api process it has its own LISTEN connection (SSE hub), so two of them share nothing but PostgreSQL.
 */
export async function startApi(
  temporal: Client,
  port = 0,
  /** This api's own settings instead of the stack's (e.g. without billing). */
  config?: Config,
): Promise<{ baseUrl: string; runUpdates: RunUpdatesHub; close: () => Promise<void> }> {
  const s = getStack();
  const log = createLogger(s.config.logLevel, 'test-api');
  const runUpdates = new RunUpdatesHub((s.ds.options as { url: string }).url, log);
  await runUpdates.start();
  const app = createApp({
    config: config ?? s.config,
    ds: s.ds,
    temporal,
    blobs: new FsBlobStore((config ?? s.config).blobDir),
    box: s.box,
    log,
    runUpdates,
  });
  const server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const { port: bound } = server.address() as net.AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${bound}`,
    runUpdates,
    close: async () => {
      await runUpdates.close();
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
}

/**
 * An in-process worker with other settings than the stack's (a configuration is frozen): it polls
 * `config.temporal.taskQueue`, so give it a queue of its own and start its work through an api with the same
 * configuration (startApi). It shares the stack's database, Temporal server, workflow bundle and sandbox.
 */
export async function startWorker(config: Config): Promise<{ close: () => Promise<void> }> {
  const s = getStack();
  const deps = activityDepsFor(config, {
    ds: s.ds,
    temporal: s.env.client,
    log: createLogger(config.logLevel, 'test-worker'),
    sandbox: s.activityDeps.sandbox,
    runUpdates: s.activityDeps.runUpdates,
  });
  return runningWorker(s.env, config, deps, s.workflowBundle);
}

/** A worker polling `config.temporal.taskQueue` until `close()`. */
async function runningWorker(
  env: TestWorkflowEnvironment,
  config: Config,
  deps: ActivityDeps,
  workflowBundle: Stack['workflowBundle'],
): Promise<{ close: () => Promise<void> }> {
  const worker = await createWorker({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue: config.temporal.taskQueue,
    deps,
    workflowBundle,
    shutdownGraceTime: '1 second',
  });
  const running = worker.run();
  return {
    close: async () => {
      worker.shutdown();
      await running;
    },
  };
}

export async function stopStack(): Promise<void> {
  for (const stop of stops.splice(0)) await stop().catch((err) => console.error('teardown:', err));
}

/**
 * A time-skipping environment (Java test server) on the same database, for timer tests. `runWorker`
 * runs a fresh worker (a worker runs once) until the given function settles.
 */
export async function startTimeSkipping() {
  const s = getStack();
  const env = await timeSkippingEnvironment(temporalTestServer(s.config));
  await env.client.connection.operatorService.addSearchAttributes({
    namespace: env.namespace ?? 'default',
    searchAttributes: Object.fromEntries(SEARCH_ATTRIBUTES.map((k) => [k.name, 2 /* KEYWORD */])),
  });
  return {
    env,
    /** Runs a worker while `fn` runs; with `config`, a worker of those settings (configWith) on its queue. */
    runWorker: async <T>(fn: () => Promise<T>, config?: Config): Promise<T> => {
      const deps = config
        ? activityDepsFor(config, {
            ds: s.ds,
            temporal: env.client,
            log: createLogger(config.logLevel, 'test-worker'),
            sandbox: s.activityDeps.sandbox,
            runUpdates: s.activityDeps.runUpdates,
          })
        : s.activityDeps;
      const worker = await createWorker({
        connection: env.nativeConnection,
        namespace: env.namespace ?? 'default',
        taskQueue: (config ?? s.config).temporal.taskQueue,
        deps,
        workflowBundle: s.workflowBundle,
        shutdownGraceTime: '1 second',
      });
      return worker.runUntil(fn);
    },
    stop: () => env.teardown(),
  };
}

/** A fresh organization with a user and a user API key: the tenant a test works in. */
export async function newTenant(label = 'tenant') {
  const suffix = Math.random().toString(36).slice(2, 10);
  const { organization, user, value } = await bootstrapOrganization(getStack().ds, {
    organizationName: `${label}-${suffix}`,
    email: `${label}-${suffix}@example.test`,
    keyName: 'test key',
  });
  return { organizationId: organization.organization_id, userId: user.user_id, email: user.email, key: value };
}

/** The webpack logger of workflow bundles: warnings and errors only. */
export const quietBundlerLogger = {
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (m: string, meta?: unknown) => console.warn(m, meta ?? ''),
  error: (m: string, meta?: unknown) => console.error(m, meta ?? ''),
  log: () => undefined,
};
