// The local embedding model's settings (LOCAL_EMBEDDINGS*, LOCAL_EMBEDDING_*) and how LOCAL_EMBEDDINGS_URL
// makes provider `local` the default embedding model only when no other is configured.
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { loadConfig } from '../../../src/config';
import { configProblems } from '../../support/config-problems';

const problems = configProblems;

describe('config: local embedding model', () => {
  it('runs under npm start by default, on 8091, with all cores, from the cache', () => {
    expect(loadConfig({ TARMAC_CACHE_DIR: '/cache' }).localEmbeddings).to.deep.equal({
      mode: 'auto',
      host: '127.0.0.1',
      port: 8091,
      modelDirs: [
        path.resolve('/cache/all-minilm-l6-v2-0.1.2'),
        path.resolve('/cache/bge-small-en-v1.5-1.20.0-beta30'),
      ],
      threads: os.availableParallelism(),
      batchSize: 32,
      maxQueued: 4096,
    });
    const set = loadConfig({
      LOCAL_EMBEDDINGS: 'off',
      LOCAL_EMBEDDINGS_PORT: '9000',
      LOCAL_EMBEDDING_MODEL_DIR: '/models/minilm, /models/other',
      LOCAL_EMBEDDING_THREADS: '1',
      LOCAL_EMBEDDING_BATCH_SIZE: '8',
      LOCAL_EMBEDDINGS_HOST: '0.0.0.0',
      LOCAL_EMBEDDING_MAX_QUEUED: '100',
    }).localEmbeddings;
    expect(set).to.deep.equal({
      mode: 'off',
      host: '0.0.0.0',
      port: 9000,
      modelDirs: ['/models/minilm', '/models/other'],
      threads: 1,
      batchSize: 8,
      maxQueued: 100,
    });
  });

  it('refuses values out of range', () => {
    const found = problems({
      LOCAL_EMBEDDINGS: 'yes',
      LOCAL_EMBEDDINGS_PORT: '70000',
      LOCAL_EMBEDDING_THREADS: '0',
      LOCAL_EMBEDDING_BATCH_SIZE: '1000',
      LOCAL_EMBEDDING_MAX_QUEUED: '0',
      LOCAL_EMBEDDINGS_URL: 'ftp://x',
    }).join('\n');
    for (const name of [
      'LOCAL_EMBEDDINGS',
      'LOCAL_EMBEDDINGS_PORT',
      'LOCAL_EMBEDDING_THREADS',
      'LOCAL_EMBEDDING_BATCH_SIZE',
      'LOCAL_EMBEDDING_MAX_QUEUED',
      'LOCAL_EMBEDDINGS_URL',
    ]) {
      expect(found).to.include(name);
    }
  });

  it('LOCAL_EMBEDDINGS_URL configures provider local, the default embedding model when no other is', () => {
    const url = 'http://127.0.0.1:8091/v1';
    const local = loadConfig({ LOCAL_EMBEDDINGS_URL: url }).models;
    expect(local.providers).to.deep.equal({ local: { baseUrl: url } });
    expect(local.defaultEmbeddingModel).to.equal('local/all-minilm-l6-v2');
    expect(local.defaultModel).to.equal(undefined);
    const openai = loadConfig({ LOCAL_EMBEDDINGS_URL: url, OPENAI_API_KEY: 'sk-test' }).models;
    expect(openai.defaultEmbeddingModel).to.equal('openai/text-embedding-3-small');
    const explicit = loadConfig({
      LOCAL_EMBEDDINGS_URL: url,
      MODEL_PROVIDERS: 'ollama=http://127.0.0.1:11434/v1',
      DEFAULT_EMBEDDING_MODEL: 'ollama/nomic-embed-text',
    }).models;
    expect(explicit.defaultEmbeddingModel).to.equal('ollama/nomic-embed-text');
    expect(problems({ LOCAL_EMBEDDINGS_URL: url, MODEL_PROVIDERS: 'local=http://127.0.0.1:1/v1' }).join()).to.include(
      'LOCAL_EMBEDDINGS_URL',
    );
  });
});
