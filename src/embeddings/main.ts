// Entry point of the local embedding server (`npm run embeddings`; `npm start` runs it when no other
// embedding model is configured, docker-compose.yml as its `embeddings` service): the local model behind an
// OpenAI-compatible /v1/embeddings on LOCAL_EMBEDDINGS_HOST (loopback by default).
// A process of its own, on the worker's side: inference never shares an event loop with the api or with
// the worker's activities, and onnxruntime gets LOCAL_EMBEDDING_THREADS cores.
import { loadConfig } from '../config';
import { createLogger } from '../logger';
import { LocalEmbeddingModel } from './local-model';
import { startEmbeddingServer } from './server';

async function main() {
  const config = loadConfig();
  const log = createLogger(config.logLevel, 'embeddings');
  const { modelDir, threads, batchSize, host, port, maxQueued } = config.localEmbeddings;
  const model = await LocalEmbeddingModel.load(modelDir, { threads, batchSize });
  const server = await startEmbeddingServer(model, { host, port, batchSize, maxQueued });
  log.info(
    { url: server.url, model: model.name, dimensions: model.dimensions, threads, batchSize },
    'embeddings ready',
  );
  const stop = () => {
    void server
      .close()
      .then(() => model.close())
      .then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((err) => {
  console.error(err instanceof Error ? err.stack : err);
  process.exit(1);
});
