// The real local embedding model (all-MiniLM-L6-v2, src/embeddings) beside the test stack, for the tests and
// benchmarks that need its quality rather than the stack's hashed bag-of-words double: the embedding server
// runs as `npm start` runs it (its compiled entry point, a process of its own), and an api and a worker of
// their own, on a task queue of their own, are configured as `npm start` configures them (LOCAL_EMBEDDINGS_URL,
// no other provider), so knowledge bases created through them embed with `local/all-minilm-l6-v2` by default.
// The model must be cached (tools/obtain-embedding-model.sh, which `npm start` runs); `localModelCached` says.
import fs from 'node:fs';
import path from 'node:path';
import { childEnv, type Config } from '../../src/config';
import { Child } from '../../src/cli/start/children';
import { EMBEDDINGS_MAIN } from '../../src/cli/start/paths';
import { waitForEmbeddings } from '../../src/cli/start/readiness';
import { configWith, freePort, getStack, startApi, startWorker } from './stack';

export function localModelCached(): boolean {
  return fs.existsSync(path.join(getStack().config.localEmbeddings.modelDirs[0], 'model.onnx'));
}

export interface LocalModelStack {
  /** The api whose knowledge bases embed with the local model by default. */
  baseUrl: string;
  config: Config;
  close(): Promise<void>;
}

export async function startLocalModelStack(overrides: Record<string, string> = {}): Promise<LocalModelStack> {
  const port = await freePort();
  const serverConfig = configWith({ LOCAL_EMBEDDINGS_PORT: String(port), ...overrides });
  const serverEnv = childEnv({ LOCAL_EMBEDDINGS_PORT: String(port), LOG_LEVEL: 'warn', ...overrides });
  // An exit while starting ends the wait below; a later one fails the queries that need it.
  const server = new Child('embeddings', process.execPath, [EMBEDDINGS_MAIN], serverEnv, () => undefined);
  const stops: Array<() => Promise<unknown>> = [() => server.stop('SIGTERM', 10_000)];
  const close = async () => {
    for (const stop of stops.splice(0).reverse()) await stop().catch((err) => console.error('teardown:', err));
  };
  try {
    await waitForEmbeddings(serverConfig, () => !server.running).catch((err: Error) => {
      throw new Error(`the local embedding server did not start: ${server.running ? err.message : 'it exited'}`);
    });
    const config = configWith({
      TEMPORAL_TASK_QUEUE: `tarmac-test-local-model-${port}`,
      MODEL_PROVIDERS: '',
      DEFAULT_MODEL: '',
      DEFAULT_EMBEDDING_MODEL: '',
      LOCAL_EMBEDDINGS_URL: `http://127.0.0.1:${port}/v1`,
      ...overrides,
    });
    const worker = await startWorker(config);
    stops.push(worker.close);
    const api = await startApi(getStack().env.client, 0, config);
    stops.push(api.close);
    return { baseUrl: api.baseUrl, config, close };
  } catch (err) {
    await close();
    throw err;
  }
}
