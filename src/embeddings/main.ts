// Entry point of the local embedding server (`npm run embeddings`; `npm start` runs it when no other
// embedding model is configured, docker-compose.yml as its `embeddings` service): the local models behind an
// OpenAI-compatible /v1/embeddings on LOCAL_EMBEDDINGS_HOST (loopback by default).
// A process of its own, on the worker's side: inference never shares an event loop with the api or with
// the worker's activities, and onnxruntime gets LOCAL_EMBEDDING_THREADS cores.
import { loadConfig } from '../config';
import { createLogger } from '../logger';
import { LocalModels } from './models';
import { startEmbeddingServer } from './server';

async function main() {
  const config = loadConfig();
  const log = createLogger(config.logLevel, 'embeddings');
  const { modelDirs, threads, batchSize, host, port, maxQueued } = config.localEmbeddings;
  const models = await LocalModels.open(modelDirs, { threads, batchSize });
  const server = await startEmbeddingServer(models, { host, port, batchSize, maxQueued });
  log.info({ url: server.url, models: models.names, threads, batchSize }, 'embeddings ready');
  const stop = () => {
    void server
      .close()
      .then(() => models.close())
      .then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((err) => {
  console.error(err instanceof Error ? err.stack : err);
  process.exit(1);
});
