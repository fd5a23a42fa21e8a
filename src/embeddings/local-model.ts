// The local embedding model: a BERT sentence encoder (all-MiniLM-L6-v2 by default) run by onnxruntime on
// this machine's cores, its text tokenized by Hugging Face's WordPiece tokenizer from the model's own
// tokenizer.json. The ONNX graph (tools/embedding-model/build_onnx.py) already mean-pools and normalizes,
// so what comes out is the sentence-transformers embedding, unit length.
//
// A batch is padded to its longest text only, so texts of similar length are batched together (sorted by
// token count): padding is work thrown away.
import fs from 'node:fs';
import path from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import * as ort from 'onnxruntime-node';

/** The longest input the model saw in training (sentence-transformers' max_seq_length); longer text is cut. */
export const MAX_TOKENS = 256;
/** Characters tokenized at most per text: far past MAX_TOKENS, so nothing kept is lost, and bounded. */
const MAX_CHARS = MAX_TOKENS * 32;

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
    const meta = json('config.json') as { hidden_size: number };
    const name = path.basename(path.resolve(dir)).replace(/-\d+(\.\d+)*$/, '');
    return new LocalEmbeddingModel(name, meta.hidden_size, tokenizer, session, options.batchSize);
  }

  /** Token ids of `text` with [CLS] and [SEP], cut to MAX_TOKENS the way sentence-transformers cuts them. */
  tokenize(text: string): number[] {
    const ids = this.tokenizer.encode(text.slice(0, MAX_CHARS)).ids;
    return ids.length <= MAX_TOKENS ? ids : [...ids.slice(0, MAX_TOKENS - 1), ids[ids.length - 1]];
  }

  /** One unit vector per text, in order, and the tokens each text was read as (for usage). */
  async embed(texts: string[]): Promise<{ vectors: number[][]; tokens: number[] }> {
    const encoded = texts.map((text, index) => ({ index, ids: this.tokenize(text) }));
    const byLength = [...encoded].sort((a, b) => a.ids.length - b.ids.length);
    const vectors: number[][] = new Array(texts.length);
    for (let i = 0; i < byLength.length; i += this.batchSize) {
      const batch = byLength.slice(i, i + this.batchSize);
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
