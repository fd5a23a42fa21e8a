// The local embedding model (src/embeddings): what `npm start` runs when no other embedding model is
// configured, and how its server runs. Where it is reached from is models.ts's LOCAL_EMBEDDINGS_URL.
import os from 'node:os';
import path from 'node:path';
import type { EnvReader } from './env';

/** The pinned model tools/obtain-embedding-model.sh fetches (its folder under the cache). */
export const LOCAL_EMBEDDING_MODEL = 'all-minilm-l6-v2-0.1.2';

export interface LocalEmbeddingSettings {
  localEmbeddings: {
    /** LOCAL_EMBEDDINGS: `auto` runs the local model under `npm start` when no other is configured; `off` never. */
    mode: 'auto' | 'off';
    /** Address the local embedding server listens on: loopback, except in docker-compose.yml (its own container). */
    host: string;
    /** Port of the local embedding server that `npm start` runs. */
    port: number;
    /** Folder with model.onnx, tokenizer.json, tokenizer_config.json and config.json. */
    modelDir: string;
    /** onnxruntime threads per inference. */
    threads: number;
    /** Texts per inference. */
    batchSize: number;
    /** Texts waiting for inference at most; a request past it is a 429 with Retry-After. */
    maxQueued: number;
  };
}

export function readLocalEmbeddings(env: EnvReader, cacheDir: string): LocalEmbeddingSettings {
  return {
    localEmbeddings: {
      mode: env.oneOf('LOCAL_EMBEDDINGS', 'auto', ['auto', 'off'] as const),
      host: env.string('LOCAL_EMBEDDINGS_HOST', '127.0.0.1'),
      port: env.int('LOCAL_EMBEDDINGS_PORT', 8091, 0, 65535),
      modelDir: path.resolve(env.string('LOCAL_EMBEDDING_MODEL_DIR', path.join(cacheDir, LOCAL_EMBEDDING_MODEL))),
      threads: env.int('LOCAL_EMBEDDING_THREADS', os.availableParallelism(), 1, 256),
      batchSize: env.int('LOCAL_EMBEDDING_BATCH_SIZE', 32, 1, 512),
      maxQueued: env.int('LOCAL_EMBEDDING_MAX_QUEUED', 4096, 1, 1_000_000),
    },
  };
}
