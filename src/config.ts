// The only module that reads process.env. Every setting is parsed and validated here, once, at start;
// a bad value stops the process with one message naming every problem. docs/configuration.md has the table.
import os from 'node:os';
import path from 'node:path';
import { parseOutboundAllow, type HostPort, type OutboundAllow } from './security/outbound-policy';
import { parseRateLimits, type RateLimitRules } from './security/rate-limit-rules';

export interface Config {
  port: number;
  host: string;
  /** Base URL clients reach the api at (no trailing slash); presigned asset URLs and GT_CLOUD_BASE_URL use it. */
  publicBaseUrl: string;
  databaseUrl: string | undefined;
  /** PostgreSQL connections per api or worker process. */
  databasePoolSize: number;
  dataDir: string;
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
  /** Where tools/obtain-temporal.sh and tools/obtain-postgres.sh cache the pinned binaries. */
  cacheDir: string;
  embeddedPostgresPort: number;
  /** A PostgreSQL (with pgvector) bin directory for the local server instead of the pinned build. */
  embeddedPostgresBinDir: string | undefined;
  /** AES-256-GCM key for secrets at rest; HMAC keys for presigned URLs are derived from it. */
  secretsKey: Buffer | undefined;
  blobDir: string;
  /**
   * BLOB_STORE=s3: blobs live in one bucket of an S3-compatible store instead of under `blobDir`, so several
   * hosts share them (src/blobs/s3-blob-store.ts). Undefined: the filesystem store.
   */
  blobS3: BlobS3Config | undefined;
  assetUrlTtlSeconds: number;
  maxAssetBytes: number;
  maxJsonBodyBytes: number;
  pageSizeDefault: number;
  pageSizeMax: number;
  inviteTtlSeconds: number;
  /** Immutable build directories of deployments; workers that run code must share it (a volume). */
  buildDir: string;
  /** How long an unused build (superseded, failed, orphaned) stays before the build-cleanup schedule removes it. */
  buildRetentionSeconds: number;
  /**
   * Disk quotas of builds (docs/security.md): bytes one build may leave in its directory (source, venv,
   * node_modules), and bytes of an organization's pip/npm download cache (trimmed oldest first to it).
   */
  buildQuota: { diskBytes: number; cacheBytes: number };
  /** Base URL of the code host for `codehost` code locations: `<base>/<owner>/<name>.git`. */
  codehostBaseUrl: string;
  /**
   * The code host's OAuth app, for connections (`credentials.codehost.auth_code` is exchanged at
   * `<baseUrl>/login/oauth/access_token`). Undefined: connections cannot be created (documented error).
   */
  codehostOAuth: { baseUrl: string; clientId: string; clientSecret: string } | undefined;
  /** The Stripe-compatible payment provider (docs/connections-and-billing.md). Undefined: billing answers 503. */
  billing: BillingConfig | undefined;
  runLimits: {
    /** Wall time of one run (a workflow timer); a run past it ends ERROR. */
    timeSeconds: number;
    /** Memory of the whole run or build (its control group: every process and its tmpfs mounts), in MiB. */
    memoryMb: number;
    /** stdout+stderr kept per run; past it the run ends ERROR. */
    logBytes: number;
    /** A function's or tool's result (read over a pipe, never a file); past it the run ends ERROR ResultTooLarge. */
    resultBytes: number;
  };
  /**
   * Isolation of user code (src/runtime/sandbox, docs/security.md): `on` runs every user process (builds,
   * runs) as its own unprivileged uid in namespaces behind a firewall, and the worker refuses to run user
   * code where that is impossible; `off` (single-tenant development only) runs it as the worker's user.
   */
  sandbox: SandboxConfig;
  /** Wall time of one deployment's build (a workflow timer). */
  deploymentTimeLimitSeconds: number;
  /** The worker's activity slots and each organization's share of execution (src/jobs/admission.ts). */
  execution: ExecutionConfig;
  /** git sources, cloned inside the sandbox: bytes on disk (GIT_MAX_MB) and wall time (GIT_TIME_LIMIT_SECONDS). */
  git: { maxBytes: number; timeSeconds: number };
  /**
   * What deployment builds (pip, npm, git, build scripts) inherit from this process's environment: proxy,
   * CA-bundle, PIP_* and NPM_CONFIG_* variables only, so builds work behind a proxy or a private index.
   */
  buildEnv: Record<string, string>;
  /**
   * Runs: a worker silent this long is presumed dead; SIGTERM→SIGKILL grace when a run is stopped; the
   * api's URL as user code on a worker reaches it (GT_CLOUD_BASE_URL; in containers often not the public one).
   */
  runProcess: { heartbeatTimeoutSeconds: number; killGraceMs: number; apiBaseUrl: string };
  /**
   * Run output the database does not take at once (an outage, a full disk): the log lines a run's pump keeps
   * unsent (bounded by lines and bytes), and how long it keeps retrying after the process ended before the
   * rest is given up and recorded as lost on the run (docs/code-runs.md#lost-output).
   */
  runLogBuffer: { lines: number; bytes: number; graceSeconds: number };
  /** Admission on free space: below either watermark on DATA_DIR's or BLOB_DIR's filesystem, new work gets 503. */
  disk: { freeMinMb: number; freeMinPercent: number };
  /** SSE event streams: keep-alive comment interval and the safety re-check for missed notifications. */
  sse: { keepAliveMs: number; recheckMs: number };
  /** How long `POST/GET /api/functions/{id}/execute` waits for the run to end before answering 202 with the run. */
  functionExecuteTimeoutSeconds: number;
  /** Model calls per assistant run; a run still calling functions after that many ends FAILED. */
  assistantMaxSteps: number;
  /** Wall time of one chat message exchange (a workflow timer); the non-streaming route waits about this long. */
  chatTimeLimitSeconds: number;
  /** Wall time of one knowledge base job (a workflow timer); past it the job ends FAILED. */
  knowledgeBaseJobTimeLimitSeconds: number;
  /** Data jobs (docs/data-connectors.md): time limit, item cap, and how the webscraper fetches. */
  dataConnectors: DataConnectorsConfig;
  /**
   * What the outbound address policy (src/security/outbound-policy.ts) allows although refused: OUTBOUND_ALLOW,
   * with DATA_CONNECTOR_ALLOW_CIDRS and DATA_CONNECTOR_ALLOW_PRIVATE_NETWORKS as aliases.
   */
  outbound: OutboundAllow;
  /** OpenAI-compatible model providers for assistant runs and chat messages (src/drivers/model). */
  models: ModelsConfig;
  /** The api's token buckets (RATE_LIMITS, docs/run-control.md#rate-limits); undefined: no limits. */
  rateLimits: RateLimitRules | undefined;
  /** Integration handlers (docs/integrations.md). */
  integrations: {
    /** Deliveries per integration per minute past which the handler answers 429 (counted in PostgreSQL). */
    ratePerMinute: number;
    /** Largest request body a handler reads; 413 beyond. */
    maxBodyBytes: number;
    /** Wall time of one delivery's work (the workflow integration-delivery-<uuid>, a workflow timer). */
    deliveryTimeLimitSeconds: number;
    /** The chat app's Web API (`<base>/chat.postMessage`). */
    chatappApiBaseUrl: string;
    /** The code host's REST API (`<base>/app/installations/{id}/access_tokens`). */
    codehostApiBaseUrl: string;
  };
  logLevel: string;
  /** Prometheus metrics (docs/production.md#metrics). */
  metrics: {
    /** Bearer token `GET /metrics` requires; unset: open (keep the port private). */
    token: string | undefined;
    /** The worker's metrics listener (`GET /metrics`); undefined: none. */
    workerPort: number | undefined;
    /** Where the Temporal SDK's own Prometheus exporter binds (host:port); unset: a free loopback port. */
    temporalAddress: string | undefined;
  };
  /** OTLP/HTTP endpoint (base URL; spans go to `<it>/v1/traces`); undefined: no tracing. */
  otlpEndpoint: string | undefined;
  shutdownGraceMs: number;
  /** What `npm start` creates on its first start (empty database). */
  bootstrap: { organizationName: string; email: string };
  /** The outside providers of data connector sources (src/services/data-connectors/sources). */
  dataSources: {
    /** Google Drive's wire protocol: OAuth token endpoint, files API origin, this installation's OAuth client. */
    drive: {
      tokenUrl: string;
      apiBaseUrl: string;
      clientId: string;
      clientSecret: string | undefined;
      redirectUri: string;
    };
    /**
     * Confluence Cloud's REST API at `https://<domain>/wiki/rest/api`; `baseUrl` replaces `https://<domain>` for
     * every connector (a proxy, tests). Domains must end with one of `domainSuffixes` (empty, from `*`: any host name).
     */
    wiki: { baseUrl: string | undefined; domainSuffixes: string[] };
  };
  publicConfig: {
    data_lake_objstore_bucket: string;
    data_lake_objstore_region: string;
    data_lake_objstore_url: string;
    drive_data_connector_client_id: string;
  };
}

export interface ExecutionConfig {
  /** Activities one worker runs at once (its activity task slots); a run or build holds one while it executes. */
  workerActivitySlots: number;
  /**
   * Runs and builds of one organization that execute at once, across all workers; the others wait QUEUED,
   * holding no worker slot, and start in order. Default: a quarter of WORKER_ACTIVITY_SLOTS.
   */
  orgMaxConcurrentRuns: number;
}

export interface BlobS3Config {
  bucket: string;
  region: string;
  /** Unset: AWS S3. */
  endpoint?: string;
  /** Where clients reach the store (presigned URLs); unset: `endpoint`. */
  publicEndpoint?: string;
  forcePathStyle: boolean;
  /** Unset: the AWS SDK's default chain (AWS_* variables, instance or task role). */
  credentials?: { accessKeyId: string; secretAccessKey: string };
}

export interface BillingConfig {
  /** The provider's API: host, port and protocol of BILLING_API_BASE_URL (https://api.stripe.com by default). */
  api: { host: string; port: number; protocol: 'http' | 'https' };
  secretKey: string;
  /** Verifies the signature of billing events; without it the billing webhook refuses every event. */
  webhookSecret: string | undefined;
  /** Where checkout sends the user back (success, cancel) and where the billing portal returns to. */
  successUrl: string;
  cancelUrl: string;
  returnUrl: string;
  /** Per request to the provider. */
  timeoutMs: number;
}

export interface DataConnectorsConfig {
  /** Wall time of one data job (a workflow timer); past it the job ends FAILED. */
  jobTimeLimitSeconds: number;
  /** Largest item a job stores; a larger one is a `TooLarge` entry of the job's errors (read no further). */
  maxItemBytes: number;
  /** Outside fetches (webscraper): per request, in seconds; redirects followed; the User-Agent sent. */
  fetchTimeoutSeconds: number;
  maxRedirects: number;
  userAgent: string;
  /** Pages fetched at once by one webscraper job. */
  fetchConcurrency: number;
}

export interface SandboxConfig {
  /**
   * Where user processes and build steps are spawned from: `process`, a small child of the worker (a fork
   * of it is cheap), or `inline`, the worker itself (src/runtime/process/spawn.ts).
   */
  spawner: 'process' | 'inline';
  mode: 'on' | 'off';
  /** Run uids are taken from [uidBase, uidBase + uidCount); an organization's gid is gidBase + its index. */
  uidBase: number;
  uidCount: number;
  gidBase: number;
  /** Host-wide uid leases (lock files); shared by every worker on the host. */
  stateDir: string;
  /** Size of a run's private HOME and /tmp (each a tmpfs of this size). */
  diskBytes: number;
  /** CPU seconds per process (RLIMIT_CPU; past it SIGXCPU ends the run ERROR). */
  cpuSeconds: number;
  /** Processes and threads of one run (pids.max of its control group, and RLIMIT_NPROC of its uid). */
  maxProcesses: number;
  /** Open files per process of a run (RLIMIT_NOFILE). */
  maxOpenFiles: number;
  /** Size of a run's /dev/shm (a tmpfs counted in the run's memory). */
  shmBytes: number;
  /** CPU weight of the platform's own processes against all runs together (weight 100), cgroup v2 units. */
  platformCpuWeight: number;
  /** Largest file a user process may write (RLIMIT_FSIZE). */
  fileBytes: number;
  /** Extra destinations (CIDRs) user code may reach although they are private (an internal package index). */
  allowCidrs: string[];
  /**
   * Single services of the host (or of a private network) user code may reach, by host and port
   * (SANDBOX_ALLOW_HOST_PORTS, e.g. a model server at 127.0.0.1:11434); loopback ones are forwarded into
   * each run's network namespace (src/runtime/sandbox/network.ts).
   */
  allowHostPorts: HostPort[];
}

export interface ModelsConfig {
  /** By provider name ([a-z0-9_-]+): the base URL of its OpenAI-compatible API (`.../v1`) and its key. */
  providers: Record<string, { baseUrl: string; apiKey?: string }>;
  /** `provider/model`, its provider configured: the model of requests that name none or no known provider. */
  defaultModel?: string;
  /**
   * `provider/model` that knowledge bases embed with (DEFAULT_EMBEDDING_MODEL; `openai/text-embedding-3-small`
   * when unset and OPENAI_API_KEY is set). Undefined: knowledge bases are full-text only.
   */
  defaultEmbeddingModel?: string;
  /** Per attempt: waiting for the provider's answer headers, and the longest silence inside a stream. */
  timeoutSeconds: number;
  /** Retries of the openai package (connection errors, 408, 409, 429, 5xx), all before any data is streamed. */
  maxRetries: number;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
}

type Env = Record<string, string | undefined>;

export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const str = (name: string, fallback: string) => {
    const v = env[name];
    return v === undefined || v === '' ? fallback : v;
  };
  const opt = (name: string) => (env[name] === undefined || env[name] === '' ? undefined : env[name]);
  const int = (name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER) => {
    const raw = opt(name);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) {
      problems.push(`${name} must be an integer in [${min}, ${max}], got ${JSON.stringify(raw)}`);
      return fallback;
    }
    return n;
  };
  const url = (name: string, fallback: string | undefined) => {
    const raw = opt(name) ?? fallback;
    if (raw === undefined) return undefined;
    try {
      new URL(raw);
    } catch {
      problems.push(`${name} must be a URL, got ${JSON.stringify(raw)}`);
    }
    return raw.replace(/\/+$/, '');
  };

  const port = int('PORT', 8080, 0, 65535);
  const dataDir = path.resolve(str('DATA_DIR', '.data'));

  let secretsKey: Buffer | undefined;
  const rawKey = opt('SECRETS_KEY');
  if (rawKey !== undefined) {
    secretsKey = Buffer.from(rawKey, 'base64');
    if (secretsKey.length !== 32)
      problems.push('SECRETS_KEY must be 32 bytes, base64-encoded (e.g. `openssl rand -base64 32`)');
  }

  const databaseUrl = opt('DATABASE_URL');
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    problems.push('DATABASE_URL must be a postgres:// URL');
  }
  const pageSizeMax = int('PAGE_SIZE_MAX', 100, 1, 10_000);

  const config: Config = {
    port,
    host: str('HOST', '0.0.0.0'),
    publicBaseUrl: url('PUBLIC_BASE_URL', `http://localhost:${port}`)!,
    databaseUrl,
    dataDir,
    temporal: {
      address: opt('TEMPORAL_ADDRESS'),
      namespace: str('TEMPORAL_NAMESPACE', 'default'),
      taskQueue: str('TEMPORAL_TASK_QUEUE', 'tarmac'),
      uiUrl: url('TEMPORAL_UI_URL', undefined),
      devPort: int('TEMPORAL_DEV_PORT', 7233, 1, 65535),
      devUiPort: int('TEMPORAL_DEV_UI_PORT', 8233, 1, 65535),
      cliPath: opt('TEMPORAL_CLI_PATH'),
      testServerPath: opt('TEMPORAL_TEST_SERVER_PATH'),
    },
    cacheDir: path.resolve(str('TARMAC_CACHE_DIR', path.join(os.homedir(), '.cache', 'tarmac'))),
    embeddedPostgresPort: int('EMBEDDED_POSTGRES_PORT', 54329, 1, 65535),
    embeddedPostgresBinDir: opt('EMBEDDED_POSTGRES_BIN_DIR') && path.resolve(opt('EMBEDDED_POSTGRES_BIN_DIR')!),
    secretsKey,
    blobDir: path.resolve(str('BLOB_DIR', path.join(dataDir, 'blobs'))),
    blobS3: blobS3Config(env, url, problems),
    assetUrlTtlSeconds: int('ASSET_URL_TTL_SECONDS', 3600, 1, 7 * 24 * 3600),
    maxAssetBytes: int('MAX_ASSET_BYTES', 1024 * 1024 * 1024, 1),
    maxJsonBodyBytes: int('MAX_JSON_BODY_BYTES', 1024 * 1024, 1024),
    pageSizeDefault: Math.min(int('PAGE_SIZE_DEFAULT', 20, 1, 10_000), pageSizeMax),
    pageSizeMax,
    inviteTtlSeconds: int('INVITE_TTL_SECONDS', 7 * 24 * 3600, 1),
    buildDir: path.resolve(str('BUILD_DIR', path.join(dataDir, 'builds'))),
    buildRetentionSeconds: int('BUILD_RETENTION_SECONDS', 3600, 0),
    buildQuota: {
      diskBytes: int('BUILD_DISK_MB', 4096, 1, 1024 * 1024) * 1024 * 1024,
      cacheBytes: int('BUILD_CACHE_MB', 2048, 0, 1024 * 1024) * 1024 * 1024,
    },
    codehostBaseUrl: url('CODEHOST_BASE_URL', 'https://github.com')!,
    codehostOAuth: codehostOAuthConfig(opt, url, problems),
    billing: undefined, // below: its URLs default to PUBLIC_BASE_URL
    rateLimits: parseRateLimits(env.RATE_LIMITS, problems),
    runLimits: {
      timeSeconds: int('RUN_TIME_LIMIT_SECONDS', 3600, 1),
      memoryMb: int('RUN_MEMORY_LIMIT_MB', 2048, 64),
      logBytes: int('RUN_LOG_LIMIT_BYTES', 10 * 1024 * 1024, 1024),
      // Results travel through Temporal's history (payloads up to 2 MiB): 1.5 MiB at most.
      resultBytes: int('RUN_RESULT_LIMIT_BYTES', 1024 * 1024, 2, 1536 * 1024),
    },
    sandbox: sandboxConfig(env, dataDir, int, problems),
    deploymentTimeLimitSeconds: int('DEPLOYMENT_TIME_LIMIT_SECONDS', 1800, 1),
    execution: executionConfig(int),
    git: {
      maxBytes: int('GIT_MAX_MB', 1024, 1, 1024 * 1024) * 1024 * 1024,
      timeSeconds: int('GIT_TIME_LIMIT_SECONDS', 300, 1, 24 * 3600),
    },
    buildEnv: pickBuildEnv(env),
    runProcess: {
      heartbeatTimeoutSeconds: int('RUN_HEARTBEAT_TIMEOUT_SECONDS', 15, 2, 3600),
      killGraceMs: int('RUN_KILL_GRACE_MS', 2000, 0, 60_000),
      apiBaseUrl: url('RUN_API_BASE_URL', undefined) ?? '', // default: publicBaseUrl (below)
    },
    runLogBuffer: {
      lines: int('RUN_LOG_BUFFER_LINES', 20_000, 100, 10_000_000),
      bytes: int('RUN_LOG_BUFFER_BYTES', 4 * 1024 * 1024, 64 * 1024),
      graceSeconds: int('RUN_LOG_GRACE_SECONDS', 120, 0, 24 * 3600),
    },
    disk: {
      freeMinMb: int('DISK_FREE_MIN_MB', 256, 0),
      freeMinPercent: int('DISK_FREE_MIN_PERCENT', 0, 0, 100),
    },
    sse: {
      keepAliveMs: int('SSE_KEEPALIVE_MS', 15_000, 100, 3_600_000),
      recheckMs: int('SSE_RECHECK_MS', 5_000, 100, 3_600_000),
    },
    functionExecuteTimeoutSeconds: int('FUNCTION_EXECUTE_TIMEOUT_SECONDS', 60, 1, 3600),
    assistantMaxSteps: int('ASSISTANT_MAX_STEPS', 8, 1, 100),
    databasePoolSize: int('DATABASE_POOL_SIZE', 10, 1, 1000),
    chatTimeLimitSeconds: int('CHAT_MESSAGE_TIME_LIMIT_SECONDS', 900, 1, 24 * 3600),
    knowledgeBaseJobTimeLimitSeconds: int('KNOWLEDGE_BASE_JOB_TIME_LIMIT_SECONDS', 3600, 1, 7 * 24 * 3600),
    dataConnectors: {
      jobTimeLimitSeconds: int('DATA_JOB_TIME_LIMIT_SECONDS', 3600, 1, 7 * 24 * 3600),
      maxItemBytes: int('DATA_CONNECTOR_MAX_ITEM_BYTES', 50 * 1024 * 1024, 1024),
      fetchTimeoutSeconds: int('DATA_CONNECTOR_FETCH_TIMEOUT_SECONDS', 30, 1, 3600),
      maxRedirects: int('DATA_CONNECTOR_MAX_REDIRECTS', 5, 0, 20),
      userAgent: str('DATA_CONNECTOR_USER_AGENT', 'TarmacDataConnector/1.0 (+https://github.com/tarmac; webscraper)'),
      fetchConcurrency: int('DATA_CONNECTOR_FETCH_CONCURRENCY', 4, 1, 64),
    },
    outbound: outboundAllow(env, problems),
    models: {
      ...modelProviders(env, problems),
      timeoutSeconds: int('MODEL_REQUEST_TIMEOUT_SECONDS', 600, 1, 24 * 3600),
      maxRetries: int('MODEL_MAX_RETRIES', 2, 0, 10),
    },
    integrations: {
      ratePerMinute: int('INTEGRATION_RATE_LIMIT_PER_MINUTE', 120, 1, 1_000_000),
      maxBodyBytes: int('INTEGRATION_MAX_BODY_BYTES', 1024 * 1024, 1024, 100 * 1024 * 1024),
      deliveryTimeLimitSeconds: int('INTEGRATION_DELIVERY_TIME_LIMIT_SECONDS', 3600, 1, 7 * 24 * 3600),
      chatappApiBaseUrl: url('CHATAPP_API_BASE_URL', 'https://slack.com/api')!,
      codehostApiBaseUrl: url('CODEHOST_API_BASE_URL', 'https://api.github.com')!,
    },
    logLevel: str('LOG_LEVEL', 'info'),
    metrics: {
      token: opt('METRICS_TOKEN'),
      workerPort: opt('WORKER_METRICS_PORT') === undefined ? undefined : int('WORKER_METRICS_PORT', 0, 0, 65535),
      temporalAddress: opt('TEMPORAL_METRICS_ADDRESS'),
    },
    otlpEndpoint: url('OTEL_EXPORTER_OTLP_ENDPOINT', undefined),
    shutdownGraceMs: int('SHUTDOWN_GRACE_MS', 10_000, 0),
    bootstrap: {
      organizationName: str('BOOTSTRAP_ORGANIZATION', 'Default'),
      email: str('BOOTSTRAP_EMAIL', 'admin@localhost').trim().toLowerCase(),
    },
    dataSources: {
      drive: {
        tokenUrl: url('DRIVE_OAUTH_TOKEN_URL', 'https://oauth2.googleapis.com/token')!,
        apiBaseUrl: url('DRIVE_API_BASE_URL', 'https://www.googleapis.com')!,
        clientId: str('DRIVE_DATA_CONNECTOR_CLIENT_ID', ''),
        clientSecret: opt('DRIVE_DATA_CONNECTOR_CLIENT_SECRET'),
        redirectUri: str('DRIVE_OAUTH_REDIRECT_URI', 'postmessage'),
      },
      wiki: {
        baseUrl: url('WIKI_BASE_URL', undefined),
        domainSuffixes: str('WIKI_DOMAIN_SUFFIXES', 'atlassian.net')
          .split(',')
          .map((d) => d.trim().toLowerCase().replace(/^\.+/, ''))
          .filter((d) => d !== '' && d !== '*'), // `*`: any host name
      },
    },
    publicConfig: {
      // The data lake is the blob store's bucket when that is S3, unless DATA_LAKE_* say otherwise.
      data_lake_objstore_bucket: str('DATA_LAKE_OBJSTORE_BUCKET', ''),
      data_lake_objstore_region: str('DATA_LAKE_OBJSTORE_REGION', ''),
      data_lake_objstore_url: str('DATA_LAKE_OBJSTORE_URL', ''),
      drive_data_connector_client_id: str('DRIVE_DATA_CONNECTOR_CLIENT_ID', ''),
    },
  };
  config.runProcess.apiBaseUrl ||= config.publicBaseUrl;
  if (config.blobS3) {
    const lake = config.publicConfig;
    const s3 = config.blobS3;
    lake.data_lake_objstore_bucket ||= s3.bucket;
    lake.data_lake_objstore_region ||= s3.region;
    lake.data_lake_objstore_url ||= s3.publicEndpoint ?? s3.endpoint ?? `https://s3.${s3.region}.amazonaws.com`;
  }
  config.billing = billingConfig(opt, url, int, config.publicBaseUrl, problems);
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(config.logLevel)) {
    problems.push(`LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent`);
  }
  if (!/^[^\s@]+@[^\s@]+$/.test(config.bootstrap.email)) problems.push('BOOTSTRAP_EMAIL must be an email address');
  if (problems.length) throw new ConfigError(problems);
  return config;
}

function blobS3Config(
  env: Env,
  url: (name: string, fallback: string | undefined) => string | undefined,
  problems: string[],
): BlobS3Config | undefined {
  const opt = (name: string) => (env[name] === undefined || env[name]!.trim() === '' ? undefined : env[name]!.trim());
  const kind = (opt('BLOB_STORE') ?? 'fs').toLowerCase();
  if (kind !== 'fs' && kind !== 's3')
    problems.push(`BLOB_STORE must be fs or s3, got ${JSON.stringify(env.BLOB_STORE)}`);
  if (kind !== 's3') return undefined;
  const bucket = opt('BLOB_S3_BUCKET');
  if (!bucket) problems.push('BLOB_S3_BUCKET is required when BLOB_STORE=s3');
  const pathStyle = (opt('BLOB_S3_FORCE_PATH_STYLE') ?? 'false').toLowerCase();
  if (pathStyle !== 'true' && pathStyle !== 'false') problems.push('BLOB_S3_FORCE_PATH_STYLE must be true or false');
  const accessKeyId = opt('BLOB_S3_ACCESS_KEY_ID');
  const secretAccessKey = opt('BLOB_S3_SECRET_ACCESS_KEY');
  if (Boolean(accessKeyId) !== Boolean(secretAccessKey)) {
    problems.push('BLOB_S3_ACCESS_KEY_ID and BLOB_S3_SECRET_ACCESS_KEY are set together or not at all');
  }
  const endpoint = url('BLOB_S3_ENDPOINT', undefined);
  const publicEndpoint = url('BLOB_S3_PUBLIC_URL', undefined);
  return {
    bucket: bucket ?? '',
    region: opt('BLOB_S3_REGION') ?? 'us-east-1',
    ...(endpoint ? { endpoint } : {}),
    ...(publicEndpoint ? { publicEndpoint } : {}),
    forcePathStyle: pathStyle === 'true',
    ...(accessKeyId && secretAccessKey ? { credentials: { accessKeyId, secretAccessKey } } : {}),
  };
}

type Opt = (name: string) => string | undefined;
type Url = (name: string, fallback: string | undefined) => string | undefined;

/** CODEHOST_OAUTH_CLIENT_ID and _SECRET together (one without the other is a mistake worth stopping for). */
function codehostOAuthConfig(opt: Opt, url: Url, problems: string[]): Config['codehostOAuth'] {
  const clientId = opt('CODEHOST_OAUTH_CLIENT_ID');
  const clientSecret = opt('CODEHOST_OAUTH_CLIENT_SECRET');
  const baseUrl = url('CODEHOST_OAUTH_BASE_URL', 'https://github.com')!;
  if (!clientId && !clientSecret) return undefined;
  if (!clientId || !clientSecret) {
    problems.push('CODEHOST_OAUTH_CLIENT_ID and CODEHOST_OAUTH_CLIENT_SECRET must be set together');
    return undefined;
  }
  return { baseUrl, clientId, clientSecret };
}

/** BILLING_SECRET_KEY turns billing on; the other BILLING_* settings have defaults. */
function billingConfig(
  opt: Opt,
  url: Url,
  int: (name: string, fallback: number, min: number, max?: number) => number,
  publicBaseUrl: string,
  problems: string[],
): BillingConfig | undefined {
  const secretKey = opt('BILLING_SECRET_KEY');
  const base = url('BILLING_API_BASE_URL', 'https://api.stripe.com')!;
  const successUrl = url('BILLING_SUCCESS_URL', publicBaseUrl)!;
  const cancelUrl = url('BILLING_CANCEL_URL', publicBaseUrl)!;
  const returnUrl = url('BILLING_RETURN_URL', publicBaseUrl)!;
  const timeoutMs = int('BILLING_TIMEOUT_MS', 30_000, 100, 600_000);
  if (!secretKey) {
    if (opt('BILLING_WEBHOOK_SECRET')) problems.push('BILLING_WEBHOOK_SECRET is set but BILLING_SECRET_KEY is not');
    return undefined;
  }
  let api: BillingConfig['api'] = { host: 'api.stripe.com', port: 443, protocol: 'https' };
  try {
    const u = new URL(base);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('protocol');
    if (u.pathname !== '/' || u.search) throw new Error('path');
    const protocol = u.protocol === 'http:' ? 'http' : 'https';
    api = { host: u.hostname, port: u.port ? Number(u.port) : protocol === 'http' ? 80 : 443, protocol };
  } catch {
    problems.push(`BILLING_API_BASE_URL must be an http(s) URL without a path, got ${JSON.stringify(base)}`);
  }
  return { api, secretKey, webhookSecret: opt('BILLING_WEBHOOK_SECRET'), successUrl, cancelUrl, returnUrl, timeoutMs };
}

/** A comma-separated list of CIDRs (`10.1.0.0/16,127.0.0.0/8`). */
function cidrList(env: Env, name: string, problems: string[]): string[] {
  const list = (env[name] ?? '')
    .split(',')
    .map((c) => c.trim())
    .filter(Boolean);
  for (const c of list) {
    if (!/^[0-9a-fA-F:.]+\/\d{1,3}$/.test(c))
      problems.push(`${name} entries must be CIDRs (10.1.0.0/16), got ${JSON.stringify(c)}`);
  }
  return list;
}

/** OUTBOUND_ALLOW, and its older names: DATA_CONNECTOR_ALLOW_CIDRS, DATA_CONNECTOR_ALLOW_PRIVATE_NETWORKS (every range). */
function outboundAllow(env: Env, problems: string[]): OutboundAllow {
  const allow = parseOutboundAllow(env.OUTBOUND_ALLOW ?? '', 'OUTBOUND_ALLOW', problems);
  allow.cidrs.push(...cidrList(env, 'DATA_CONNECTOR_ALLOW_CIDRS', problems));
  if (['1', 'true', 'yes', 'on'].includes((env.DATA_CONNECTOR_ALLOW_PRIVATE_NETWORKS ?? '').trim().toLowerCase()))
    allow.cidrs.push('0.0.0.0/0', '::/0');
  return allow;
}

/** `host:port,...` (an IPv6 address in brackets: `[::1]:11434`), parsed as OUTBOUND_ALLOW's pairs are. */
function hostPortList(env: Env, name: string, problems: string[]): HostPort[] {
  const allow = parseOutboundAllow(env[name] ?? '', name, problems);
  if (allow.cidrs.length)
    problems.push(
      `${name} takes host:port pairs only (ranges go in SANDBOX_ALLOW_CIDRS), got ${allow.cidrs.join(', ')}`,
    );
  return allow.hostPorts;
}

function sandboxConfig(
  env: Env,
  dataDir: string,
  int: (name: string, fallback: number, min: number, max?: number) => number,
  problems: string[],
): SandboxConfig {
  const mode = (env.SANDBOX ?? '').trim().toLowerCase() || 'on';
  if (mode !== 'on' && mode !== 'off') problems.push(`SANDBOX must be on or off, got ${JSON.stringify(env.SANDBOX)}`);
  const spawner = (env.SPAWNER ?? '').trim().toLowerCase() || 'process';
  if (spawner !== 'process' && spawner !== 'inline')
    problems.push(`SPAWNER must be process or inline, got ${JSON.stringify(env.SPAWNER)}`);
  const allowCidrs = cidrList(env, 'SANDBOX_ALLOW_CIDRS', problems);
  const root = process.getuid?.() === 0;
  return {
    mode: mode === 'off' ? 'off' : 'on',
    spawner: spawner === 'inline' ? 'inline' : 'process',
    uidBase: int('SANDBOX_UID_BASE', 200_000, 1000, 2 ** 31 - 2),
    uidCount: int('SANDBOX_UID_COUNT', 10_000, 1, 1_000_000),
    gidBase: int('SANDBOX_GID_BASE', 300_000, 1000, 2 ** 31 - 2),
    stateDir: path.resolve(env.SANDBOX_STATE_DIR || (root ? '/run/tarmac-sandbox' : path.join(dataDir, 'sandbox'))),
    diskBytes: int('SANDBOX_DISK_MB', 512, 1, 1024 * 1024) * 1024 * 1024,
    cpuSeconds: int('SANDBOX_CPU_SECONDS', 3600, 1),
    maxProcesses: int('SANDBOX_MAX_PROCESSES', 256, 8, 1_000_000),
    fileBytes: int('SANDBOX_FILE_MB', 1024, 1, 1024 * 1024) * 1024 * 1024,
    maxOpenFiles: int('SANDBOX_MAX_OPEN_FILES', 4096, 64, 1_048_576),
    shmBytes: int('SANDBOX_SHM_MB', 64, 1, 1024 * 1024) * 1024 * 1024,
    platformCpuWeight: int('SANDBOX_PLATFORM_CPU_WEIGHT', 400, 1, 10_000),
    allowCidrs,
    allowHostPorts: hostPortList(env, 'SANDBOX_ALLOW_HOST_PORTS', problems),
  };
}

const OPENAI_BASE_URL = 'https://api.openai.com/v1';

/**
 * MODEL_PROVIDERS (`name=baseURL,...`), a key per provider (MODEL_PROVIDER_<NAME>_API_KEY), the OPENAI_API_KEY
 * shortcut (provider `openai` at OPENAI_BASE_URL) and DEFAULT_MODEL (`provider/model`, its provider configured).
 */
function modelProviders(
  env: Env,
  problems: string[],
): Pick<ModelsConfig, 'providers' | 'defaultModel' | 'defaultEmbeddingModel'> {
  const opt = (name: string) => (env[name] === undefined || env[name]!.trim() === '' ? undefined : env[name]!.trim());
  const keyOf = (name: string) => opt(`MODEL_PROVIDER_${name.toUpperCase().replace(/-/g, '_')}_API_KEY`);
  const validUrl = (name: string, raw: string) => {
    let u: URL | undefined;
    try {
      u = new URL(raw);
    } catch {
      // reported below
    }
    if (!u || !['http:', 'https:'].includes(u.protocol)) {
      problems.push(`${name} must be an http(s) URL, got ${JSON.stringify(raw)}`);
      return false;
    }
    return true;
  };
  const providers: ModelsConfig['providers'] = {};
  for (const entry of (opt('MODEL_PROVIDERS') ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const eq = entry.indexOf('=');
    const name = eq < 0 ? entry : entry.slice(0, eq).trim();
    const baseUrl = eq < 0 ? '' : entry.slice(eq + 1).trim();
    if (!/^[a-z0-9_-]+$/.test(name) || name === '__proto__' || !baseUrl) {
      problems.push(
        `MODEL_PROVIDERS entries must be name=baseURL with a name of [a-z0-9_-], got ${JSON.stringify(entry)}`,
      );
      continue;
    }
    if (Object.hasOwn(providers, name)) problems.push(`MODEL_PROVIDERS names provider "${name}" twice`);
    if (!validUrl(`MODEL_PROVIDERS entry "${name}"`, baseUrl)) continue;
    providers[name] = { baseUrl: baseUrl.replace(/\/+$/, ''), apiKey: keyOf(name) };
  }
  const openaiKey = opt('OPENAI_API_KEY');
  if (openaiKey !== undefined) {
    if (!Object.hasOwn(providers, 'openai')) {
      const baseUrl = opt('OPENAI_BASE_URL') ?? OPENAI_BASE_URL;
      if (validUrl('OPENAI_BASE_URL', baseUrl))
        providers.openai = { baseUrl: baseUrl.replace(/\/+$/, ''), apiKey: openaiKey };
    } else {
      providers.openai.apiKey ??= openaiKey;
    }
  }
  for (const p of Object.values(providers)) if (p.apiKey === undefined) delete p.apiKey;

  const checkModel = (setting: string, value: string | undefined, example: string) => {
    if (value === undefined) return;
    const slash = value.indexOf('/');
    const provider = value.slice(0, Math.max(slash, 0));
    const configured = Object.keys(providers);
    if (slash <= 0 || slash === value.length - 1) {
      problems.push(`${setting} must be provider/model (e.g. ${example}), got ${JSON.stringify(value)}`);
    } else if (!Object.hasOwn(providers, provider)) {
      problems.push(
        `${setting} names provider "${provider}", which is not configured (configured: ${configured.join(', ') || 'none'}); ` +
          'add it to MODEL_PROVIDERS (e.g. MODEL_PROVIDERS=ollama=http://127.0.0.1:11434/v1) or set OPENAI_API_KEY for openai',
      );
    }
  };
  const defaultModel = opt('DEFAULT_MODEL');
  checkModel('DEFAULT_MODEL', defaultModel, 'openai/gpt-4.1-mini');
  const explicitEmbedding = opt('DEFAULT_EMBEDDING_MODEL');
  checkModel('DEFAULT_EMBEDDING_MODEL', explicitEmbedding, 'openai/text-embedding-3-small');
  const defaultEmbeddingModel =
    explicitEmbedding ??
    (openaiKey !== undefined && Object.hasOwn(providers, 'openai') ? 'openai/text-embedding-3-small' : undefined);
  return { providers, defaultModel, ...(defaultEmbeddingModel ? { defaultEmbeddingModel } : {}) };
}

const BUILD_ENV_NAMES = new Set([
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'http_proxy',
  'https_proxy',
  'no_proxy',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'REQUESTS_CA_BUNDLE',
  'NODE_EXTRA_CA_CERTS',
  'GIT_SSL_CAINFO',
]);

/** Lowercase npm_config_* are left out on purpose: `npm run` sets them (prefix, cache) for the worker itself. */
function pickBuildEnv(env: Env): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && (BUILD_ENV_NAMES.has(name) || /^(PIP_|NPM_CONFIG_)/.test(name))) picked[name] = value;
  }
  return picked;
}

/** For processes that need the database and the secrets key (api, worker, admin): fail clearly when absent. */
export function requireRuntime(config: Config): asserts config is Config & { databaseUrl: string; secretsKey: Buffer } {
  const missing: string[] = [];
  if (!config.databaseUrl) missing.push('DATABASE_URL is required (npm start sets it for the embedded database)');
  if (!config.secretsKey) missing.push('SECRETS_KEY is required (npm start generates one under .data/)');
  if (missing.length) throw new ConfigError(missing);
}

/** Temporal address the processes connect to: TEMPORAL_ADDRESS, else the local dev server. */
export function temporalAddress(config: Config): string {
  return config.temporal.address ?? `127.0.0.1:${config.temporal.devPort}`;
}

/**
 * Environment for a child process of `npm start` (api, worker, temporal, tools/obtain-temporal.sh):
 * this process's environment with the given overrides. Kept here so no other module reads process.env.
 */
export function childEnv(overrides: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const [k, v] of Object.entries(overrides)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

function executionConfig(int: (name: string, fallback: number, min: number, max?: number) => number): ExecutionConfig {
  const workerActivitySlots = int('WORKER_ACTIVITY_SLOTS', 100, 1, 10_000);
  return {
    workerActivitySlots,
    orgMaxConcurrentRuns: int('ORG_MAX_CONCURRENT_RUNS', Math.max(1, Math.floor(workerActivitySlots / 4)), 1, 100_000),
  };
}
