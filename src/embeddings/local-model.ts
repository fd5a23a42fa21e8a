// A local embedding model: a BERT sentence encoder (bge-small-en-v1.5 or all-MiniLM-L6-v2) run by onnxruntime
// on this machine's cores, its text tokenized by Hugging Face's WordPiece tokenizer from the model's own
// tokenizer.json. The ONNX graph (tools/embedding-model/) already pools as the model was trained (mean for
// MiniLM, [CLS] for bge) and normalizes, so what comes out is the model's sentence embedding, unit length.
//
// A batch is padded to its longest text only, so texts of similar length are batched together (sorted by
// token count): padding is work thrown away.
import fs from 'node:fs';
import path from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import * as ort from 'onnxruntime-node';

/**
 * The longest input a model saw in training (sentence-transformers' max_seq_length), when its config.json
 * does not say (`max_seq_length`, which tools/obtain-embedding-model.sh writes for bge): longer text is cut.
 */
export const MAX_TOKENS = 256;
/**
 * Tokens of one inference at most (texts × the longest's tokens): what onnxruntime's memory grows with (the
 * attention scores are batch × heads × tokens²), so a batch of long texts is smaller than one of short texts:
 * 16 chunks of 256 tokens, 8 of 512. Measured on 2 cores (bench/RESULTS.md, session 22): against 8,192, the
 * same MiniLM throughput and a third less peak memory (600 against 900 MB).
 */
const BATCH_TOKENS = 4096;
/** Characters tokenized at most per token kept: far past any token's length, so nothing kept is lost, and bounded. */
const CHARS_PER_TOKEN = 32;

/** A model's name as the provider reports it: its folder's name without the version (e.g. all-minilm-l6-v2). */
export const modelNameOf = (dir: string) => path.basename(path.resolve(dir)).replace(/-\d+(\.\d+)*(-[a-z]+\d+)?$/, '');

export interface LocalModelOptions {
  /** onnxruntime's threads inside one inference (all the cores by default). */
  threads: number;
  /** Texts per inference. */
  batchSize: number;
}

export class LocalEmbeddingModel {
  private constructor(
    /** The model's name as the provider reports it (the folder name, e.g. all-minilm-l6-v2). */
    readonly name: string,
    readonly dimensions: number,
    /** Tokens read of a text at most, [CLS] and [SEP] included. */
    readonly maxTokens: number,
    private readonly tokenizer: Tokenizer,
    private readonly session: ort.InferenceSession,
    private readonly batchSize: number,
  ) {}

  /** Loads model.onnx, tokenizer.json and tokenizer_config.json from `dir` (tools/obtain-embedding-model.sh). */
  static async load(dir: string, options: LocalModelOptions): Promise<LocalEmbeddingModel> {
    const json = (file: string) => JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as object;
    const tokenizer = new Tokenizer(json('tokenizer.json'), json('tokenizer_config.json'));
    const session = await ort.InferenceSession.create(path.join(dir, 'model.onnx'), {
      intraOpNumThreads: options.threads,
      interOpNumThreads: 1,
      graphOptimizationLevel: 'all',
    });
    const meta = json('config.json') as { hidden_size: number; max_seq_length?: number };
    const maxTokens = meta.max_seq_length ?? MAX_TOKENS;
    return new LocalEmbeddingModel(
      modelNameOf(dir),
      meta.hidden_size,
      maxTokens,
      tokenizer,
      session,
      options.batchSize,
    );
  }

  /** Token ids of `text` with [CLS] and [SEP], cut to maxTokens the way sentence-transformers cuts them. */
  tokenize(text: string): number[] {
    const max = this.maxTokens;
    const ids = this.tokenizer.encode(text.slice(0, max * CHARS_PER_TOKEN)).ids;
    return ids.length <= max ? ids : [...ids.slice(0, max - 1), ids[ids.length - 1]];
  }

  /** One unit vector per text, in order, and the tokens each text was read as (for usage). */
  async embed(texts: string[]): Promise<{ vectors: number[][]; tokens: number[] }> {
    const encoded = texts.map((text, index) => ({ index, ids: this.tokenize(text) }));
    const byLength = [...encoded].sort((a, b) => a.ids.length - b.ids.length);
    const vectors: number[][] = new Array(texts.length);
    for (let i = 0; i < byLength.length;) {
      // At most batchSize texts, and at most BATCH_TOKENS tokens once padded to the longest (the last one).
      let end = i + 1;
      while (
        end < byLength.length &&
        end - i < this.batchSize &&
        (end - i + 1) * byLength[end].ids.length <= BATCH_TOKENS
      )
        end++;
      const batch = byLength.slice(i, end);
      i = end;
      const out = await this.run(batch.map((e) => e.ids));
      batch.forEach((e, j) => (vectors[e.index] = out[j]));
    }
    return { vectors, tokens: encoded.map((e) => e.ids.length) };
  }

  private async run(batch: number[][]): Promise<number[][]> {
    const width = Math.max(...batch.map((ids) => ids.length));
    const ids = new BigInt64Array(batch.length * width);
    const mask = new BigInt64Array(batch.length * width);
    batch.forEach((row, r) =>
      row.forEach((id, c) => {
        ids[r * width + c] = BigInt(id);
        mask[r * width + c] = 1n;
      }),
    );
    const shape = [batch.length, width];
    const result = await this.session.run({
      input_ids: new ort.Tensor('int64', ids, shape),
      attention_mask: new ort.Tensor('int64', mask, shape),
    });
    const flat = result.sentence_embedding.data as Float32Array;
    return batch.map((_, r) => Array.from(flat.subarray(r * this.dimensions, (r + 1) * this.dimensions)));
  }

  async close(): Promise<void> {
    await this.session.release();
  }
}
