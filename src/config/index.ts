// Every setting, read from the environment once at start (env.ts is the reader, one file per section) and
// frozen: nothing patches the configuration at run time; a process, or a test, that needs other settings is
// given another environment (loadConfig(env)) or takes the value as a parameter. A bad value stops the process
// with one message naming every problem. docs/configuration.md has the table.
import { readApi, type ApiSettings } from './api';
import { readBlobs, type BlobSettings } from './blobs';
import { readBuilds, type BuildSettings } from './builds';
import { readConnectionsBilling, type ConnectionsBillingSettings } from './connections-billing';
import { readDataConnectors, type DataConnectorSettings } from './data-connectors';
import { readDatabase, type DatabaseSettings } from './database';
import { ConfigError, EnvReader, type Env } from './env';
import { readIdempotency, type IdempotencySettings } from './idempotency';
import { readIntegrations, type IntegrationSettings } from './integrations';
import { readLocal, type LocalSettings } from './local';
import { readLocalEmbeddings, type LocalEmbeddingSettings } from './local-embeddings';
import { readModels, type ModelSettings } from './models';
import { readObservability, type ObservabilitySettings } from './observability';
import { readOutbound, type OutboundSettings } from './outbound';
import { readPeople, type PeopleSettings } from './people';
import { readPublicConfig, type PublicConfigSettings } from './public-config';
import { readRateLimits, type RateLimitSettings } from './rate-limits';
import { readRuns, type RunSettings } from './runs';
import { readSandbox, type SandboxSettings } from './sandbox';
import { readSchedules, type ScheduleSettings } from './schedules';
import { readSecrets, type SecretsSettings } from './secrets';
import { readTemporal, type TemporalSettings } from './temporal';

export { ConfigError, childEnv, EnvReader, type Env, type JobLimits } from './env';
export type { BlobS3Config } from './blobs';
export type { BillingConfig } from './connections-billing';
export type { DataConnectorsConfig } from './data-connectors';
export type { ModelsConfig } from './models';
export type { ExecutionConfig } from './runs';
export type { SandboxConfig } from './sandbox';
export { exportWorkflowStackTraces, temporalAddress, temporalConnectionOptions } from './temporal';

type Settings = ApiSettings &
  DatabaseSettings &
  LocalSettings &
  SecretsSettings &
  TemporalSettings &
  BlobSettings &
  BuildSettings &
  ConnectionsBillingSettings &
  RunSettings &
  SandboxSettings &
  ModelSettings &
  IntegrationSettings &
  DataConnectorSettings &
  OutboundSettings &
  ObservabilitySettings &
  PublicConfigSettings &
  RateLimitSettings &
  PeopleSettings &
  IdempotencySettings &
  ScheduleSettings &
  LocalEmbeddingSettings;

/**
 * Read-only all the way down, as the object is at run time. Arrays keep their mutable type so that they can be
 * handed to functions that take `string[]`; pushing to one throws all the same.
 */
export type Frozen<T> = T extends Buffer | readonly unknown[]
  ? T
  : T extends object
    ? { readonly [K in keyof T]: Frozen<T[K]> }
    : T;

export type Config = Frozen<Settings>;

/** Reads and validates every setting of `env`; the result is deeply frozen. Throws ConfigError. */
export function loadConfig(env: Env = process.env): Config {
  const reader = new EnvReader(env);
  const api = readApi(reader);
  const local = readLocal(reader);
  const blobs = readBlobs(reader, local.dataDir);
  const runs = readRuns(reader, api.publicBaseUrl);
  const config: Settings = {
    ...api,
    ...readDatabase(reader),
    ...local,
    ...readSecrets(reader),
    ...readTemporal(reader),
    ...blobs,
    ...readBuilds(reader, local.dataDir),
    ...readConnectionsBilling(reader, api.publicBaseUrl),
    ...runs,
    ...readSandbox(reader, local.dataDir, local.cacheDir, runs.execution.workerActivitySlots),
    ...readModels(reader),
    ...readIntegrations(reader),
    ...readDataConnectors(reader),
    ...readOutbound(reader),
    ...readObservability(reader),
    ...readPublicConfig(reader, blobs.blobS3),
    ...readRateLimits(reader),
    ...readPeople(reader),
    ...readIdempotency(reader),
    ...readSchedules(reader),
    ...readLocalEmbeddings(reader, local.cacheDir),
  };
  reader.throwIfProblems();
  return deepFreeze(config);
}

/** For processes that need the database and the secrets key (api, worker, admin): fail clearly when absent. */
export function requireRuntime(config: Config): asserts config is Config & { databaseUrl: string; secretsKey: Buffer } {
  const missing: string[] = [];
  if (!config.databaseUrl) missing.push('DATABASE_URL is required (npm start sets it for the embedded database)');
  if (!config.secretsKey) missing.push('SECRETS_KEY is required (npm start generates one under .data/)');
  if (missing.length) throw new ConfigError(missing);
}

/** Freezes objects and arrays all the way down; the bytes of a Buffer (the secrets key) cannot be frozen. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !ArrayBuffer.isView(value) && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
