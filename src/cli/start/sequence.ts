// The start sequence, step by step:
//   binaries (PostgreSQL, the embedding model, the Temporal CLI, the worker's Node) → ports free → PostgreSQL (local, unless DATABASE_URL) → Temporal (local dev server, unless
//   TEMPORAL_ADDRESS) → secrets key → migrations and first-start bootstrap → local embedding server (when no
//   other embedding model is configured) → api + worker → ready → banner.
// Everything it starts is recorded in `running` at once, for the supervisor to stop; between steps it gives
// up (Stopped) as soon as a shutdown has begun. It resolves once the api and the worker are ready.
import fs from 'node:fs';
import { childEnv, Config } from '../../config';
import { LOCAL_PROVIDER } from '../../config/models';
import { printBanner } from './banner';
import { Child, OnUnexpectedExit } from './children';
import { migrateAndBootstrap } from './database-setup';
import { startLocalPostgres, startLocalTemporal } from './local-services';
import {
  obtainEmbeddingModel,
  obtainPostgres,
  obtainSandbox,
  obtainTemporalCli,
  obtainPlatformNode,
  temporalCliMissing,
} from './obtain';
import { red, rel, say, seconds } from './output';
import { API_MAIN, EMBEDDINGS_MAIN, WORKER_MAIN } from './paths';
import { checkPortsFree } from './ports';
import { waitForApi, waitForEmbeddings, waitForTemporal, waitForWorker } from './readiness';
import { Running, StartHooks, Stopped } from './running';
import { readOrCreateSecretsKey } from './secrets-key';
import { describeIsolation, isolationOnThisHost } from '../../runtime/sandbox/isolation';
import { pastaProgram } from '../../runtime/sandbox/pasta-program';
import { temporalUiUrl } from '../../temporal/ui-url';

/** TEMPORAL_ADDRESS, else the local dev server's. */
export const temporalAddressOf = (config: Config) => config.temporal.address ?? `127.0.0.1:${config.temporal.devPort}`;

export async function run(
  config: Config,
  running: Running,
  onUnexpectedExit: OnUnexpectedExit,
  hooks: StartHooks,
): Promise<void> {
  const step = () => {
    if (hooks.isStopping()) throw new Stopped();
  };
  const local = {
    postgres: !config.databaseUrl,
    temporal: !config.temporal.address,
    // The offline default: only when nothing else embeds (OPENAI_API_KEY, DEFAULT_EMBEDDING_MODEL).
    // A provider of MODEL_PROVIDERS already named `local` keeps its name (and no local model runs).
    embeddings:
      config.localEmbeddings.mode === 'auto' &&
      !config.models.defaultEmbeddingModel &&
      !Object.hasOwn(config.models.providers, LOCAL_PROVIDER),
  };
  fs.mkdirSync(config.dataDir, { recursive: true });
  // Others may pass through (as root, the local PostgreSQL runs as its own user; a sandboxed run reaches
  // its build by its path), never list it; the blobs are the platform's alone.
  fs.chmodSync(config.dataDir, 0o711);
  fs.mkdirSync(config.blobDir, { recursive: true, mode: 0o700 });
  fs.chmodSync(config.blobDir, 0o700);
  say(`starting tarmac (data in ${rel(config.dataDir)})`);
  await obtainSandbox(config);
  // Before anything is downloaded or built: which isolation this host allows, and what it lacks.
  const isolation = isolationOnThisHost(config.sandbox.mode, pastaProgram(config.sandbox));
  if (isolation.mode === 'none') throw new Error(`User code ${describeIsolation(isolation)}`);
  say(`user code: ${describeIsolation(isolation)}`);
  for (const piece of isolation.missing) say(`  not on this host: ${piece}`);

  // 1. The binaries, pinned and cached in ~/.cache/tarmac: PostgreSQL with pgvector (downloaded once, in
  //    seconds) and the Temporal CLI (built once, in minutes).
  if (local.postgres) {
    await obtainPostgres();
    step();
  }
  if (local.embeddings) {
    // Not fatal: without the model the platform still runs, its knowledge bases full text only.
    await obtainEmbeddingModel().catch((err: Error) => {
      say(red(`${err.message}\nContinuing without the local embedding model: knowledge bases are full text only.`));
      local.embeddings = false;
    });
    step();
  }
  if (local.temporal && temporalCliMissing(config)) {
    await obtainTemporalCli();
    step();
  }
  const platformNode = await obtainPlatformNode();
  step();

  // 2. Ports we are about to bind must be free (a clear message instead of a crash later).
  await checkPortsFree(config, local);

  // 3. PostgreSQL.
  let databaseUrl: string;
  if (local.postgres) {
    await startLocalPostgres(config, running, onUnexpectedExit);
    databaseUrl = running.postgres!.url;
  } else {
    databaseUrl = config.databaseUrl!;
    say('PostgreSQL: using DATABASE_URL');
  }
  step();

  // 4. Temporal.
  const temporalAddress = temporalAddressOf(config);
  if (local.temporal) {
    await startLocalTemporal(config, temporalAddress, running, onUnexpectedExit, hooks.isStopping);
  } else {
    say(`Temporal: using TEMPORAL_ADDRESS=${temporalAddress}`);
    await waitForTemporal(temporalAddress, config.temporal.namespace, 30_000, undefined, hooks.isStopping);
  }
  step();

  // 5. Secrets key.
  const secretsKey = readOrCreateSecretsKey(config);
  step();

  // 6. Migrations and, on an empty database, the first organization, user, key and password link.
  const firstStart = await migrateAndBootstrap(databaseUrl, config, (first) => hooks.setFirstStart(first));
  step();

  // 7. The api and the worker.
  const env = childEnv({
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: temporalAddress,
    // The api links runs to their workflows in the UI (the console); with TEMPORAL_ADDRESS set it has no other way to know it.
    ...(temporalUiUrl(config) ? { TEMPORAL_UI_URL: temporalUiUrl(config) } : {}),
    SECRETS_KEY: secretsKey,
    DATA_DIR: config.dataDir,
    BLOB_DIR: config.blobDir,
    ...(local.embeddings ? { LOCAL_EMBEDDINGS_URL: `http://127.0.0.1:${config.localEmbeddings.port}/v1` } : {}),
  });
  if (local.embeddings) {
    say('starting the local embedding server (all-MiniLM-L6-v2)...');
    running.embeddings = new Child('embeddings', process.execPath, [EMBEDDINGS_MAIN], env, onUnexpectedExit);
    await waitForEmbeddings(config, hooks.isStopping);
    say(`local embeddings ready at ${env.LOCAL_EMBEDDINGS_URL}: knowledge bases embed with local/all-minilm-l6-v2`);
    step();
  }
  say('starting the api and the worker...');
  const t0 = Date.now();
  running.api = new Child('api', platformNode, [API_MAIN], env, onUnexpectedExit);
  // User code's Node stays this one (the system's, which the sandbox shows it), whatever runs the worker.
  const workerEnv = { ...env, NODEJS_RUNTIME: config.nodeRuntime };
  running.worker = new Child('worker', platformNode, [WORKER_MAIN], workerEnv, onUnexpectedExit);
  await Promise.all([
    waitForApi(config, hooks.isStopping),
    waitForWorker(temporalAddress, config, running.worker.proc.pid!, hooks.isStopping),
  ]);
  step();
  hooks.setReady();
  say(`api and worker ready (${seconds(Date.now() - t0)})`);
  printBanner(config, firstStart, isolation, local.embeddings);
}
