// embed-local: ingestion throughput of each local embedding model (src/embeddings), the part
// of a knowledge base job it dominates (the rest of a job runs near 1,000 chunks/s, section 6 of RESULTS.md).
// The chunks are the repository's own docs/*.md cut by the platform's chunker (chunkText: at most 256
// tokens), so they have the length and vocabulary of real prose. Measured: the model called directly with
// all cores and with one, and through its OpenAI-compatible server the way a job calls it (64 texts per
// request, EMBED_BATCH of ingest.ts). Needs the model cached (tools/obtain-embedding-model.sh; npm start
// fetches it). Also runs alone, without the stack: node dist/bench/local-embeddings.js [chunks].
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config';
import { LocalEmbeddingModel } from '../src/embeddings/local-model';
import { LocalModels } from '../src/embeddings/models';
import { startEmbeddingServer } from '../src/embeddings/server';
import { chunkText } from '../src/services/knowledge/documents/chunking';
import { EMBED_BATCH } from '../src/services/knowledge/index/ingest';
import type { BenchReport } from './support/stats';
import { table } from './support/stats';

const DOCS = path.resolve(__dirname, '..', '..', 'docs');

function corpus(size: number): string[] {
  const chunks = fs
    .readdirSync(DOCS)
    .filter((f) => f.endsWith('.md'))
    .sort()
    .flatMap((f) => chunkText(fs.readFileSync(path.join(DOCS, f), 'utf8')).map((c) => c.content));
  return Array.from({ length: size }, (_, i) => chunks[i % chunks.length]);
}

async function timed<T>(work: () => Promise<T>): Promise<number> {
  const t0 = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

export async function embedLocal(options: { chunks: number }): Promise<BenchReport> {
  const { modelDirs, batchSize, maxQueued } = loadConfig().localEmbeddings;
  const dirs = modelDirs.filter((dir) => fs.existsSync(path.join(dir, 'model.onnx')));
  if (!dirs.length) throw new Error(`no model in ${modelDirs.join(', ')}: run bash tools/obtain-embedding-model.sh`);
  const texts = corpus(options.chunks);
  const cores = os.availableParallelism();
  const rows: Array<Array<string | number>> = [];
  const data: Record<string, unknown> = { chunks: texts.length, cores, batchSize };
  for (const dir of dirs) {
    for (const threads of [...new Set([cores, 1])]) {
      const model = await LocalEmbeddingModel.load(dir, { threads, batchSize });
      await model.embed(texts.slice(0, batchSize)); // warm-up: the first run allocates
      let tokens = 0;
      const seconds = await timed(async () => (tokens = (await model.embed(texts)).tokens.reduce((a, b) => a + b, 0)));
      const label = `${model.name}, ${threads} thread${threads > 1 ? 's' : ''}`;
      rows.push([label, texts.length, texts.length / seconds, tokens / seconds]);
      data[`${model.name}-direct-${threads}`] = { seconds, tokens };
      await model.close();
      if (threads !== cores) continue;
      const models = await LocalModels.open([dir], { threads, batchSize });
      const server = await startEmbeddingServer(models, { host: '127.0.0.1', port: 0, batchSize, maxQueued });
      const post = (input: string[]) =>
        fetch(`${server.url}/embeddings`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: model.name, input }),
        }).then((r) => r.json());
      const httpSeconds = await timed(async () => {
        for (let i = 0; i < texts.length; i += EMBED_BATCH) await post(texts.slice(i, i + EMBED_BATCH));
      });
      rows.push([
        `${model.name}, server, ${EMBED_BATCH} per request`,
        texts.length,
        texts.length / httpSeconds,
        tokens / httpSeconds,
      ]);
      data[`${model.name}-server`] = { seconds: httpSeconds };
      await server.close();
      await models.close();
    }
  }
  return {
    name: 'embed-local',
    tables: [
      table(
        `embed-local: the local models on ${cores} cores, chunks of docs/*.md (≤ 256 tokens), batch ${batchSize}`,
        ['path', 'chunks', 'chunks/s', 'tokens/s'],
        rows,
      ),
    ],
    ratios: [],
    notes: ['the busier the machine, the lower: compare rows of one run, not runs of different days'],
    data,
  };
}

if (require.main === module) {
  void embedLocal({ chunks: Number(process.argv[2] ?? 512) }).then((report) => {
    for (const t of report.tables) console.log(t);
    console.log(JSON.stringify(report.data));
  });
}
