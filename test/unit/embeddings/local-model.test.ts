// The local embedding models: a tiny random BERT shows the mechanics (unit vectors, padding that changes
// nothing, truncation at MAX_TOKENS); the real all-MiniLM-L6-v2 and bge-small-en-v1.5, when
// tools/obtain-embedding-model.sh has cached them, must agree with reference vectors computed independently
// to cosine ≥ 0.999: for MiniLM, numpy over the safetensors weights (tools/embedding-model/reference.py); for
// bge, whose package ships only the ONNX encoder, that encoder run by Python's onnxruntime with Hugging Face's
// Rust tokenizer and the [CLS] pooling done in numpy (reference_onnx.py), which checks our tokenizer and the
// pooling cls_pooling.py adds to the graph.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { LocalEmbeddingModel, MAX_TOKENS } from '../../../src/embeddings/local-model';
import { LOCAL_EMBEDDING_MODELS } from '../../../src/config/local-embeddings';
import { tinyEmbeddingModel } from '../../support/tiny-embedding-model';

const cosine = (a: number[], b: number[]) => {
  const dot = a.reduce((s, v, i) => s + v * b[i], 0);
  return dot / Math.hypot(...a) / Math.hypot(...b);
};

describe('local embedding model', function () {
  this.timeout(300_000);

  describe('a tiny random BERT', () => {
    let model: LocalEmbeddingModel;
    before(async () => {
      model = await LocalEmbeddingModel.load(await tinyEmbeddingModel(), { threads: 2, batchSize: 2 });
    });
    after(() => model?.close());

    it('gives one unit vector per text, in order, the same whatever the batch and its padding', async () => {
      const texts = ['the quick brown fox', 'a', 'paris is the capital of france, on a river.', 'the quick brown fox'];
      const { vectors, tokens } = await model.embed(texts);
      expect(vectors).to.have.length(4);
      for (const v of vectors) {
        expect(v).to.have.length(32);
        expect(Math.hypot(...v)).to.be.closeTo(1, 1e-5);
      }
      expect(tokens[1]).to.equal(3); // [CLS] a [SEP]
      expect(cosine(vectors[0], vectors[3])).to.be.closeTo(1, 1e-6);
      expect(cosine(vectors[0], vectors[1])).to.be.below(0.9999);
      // Alone (no padding) or batched beside a longer text (padded): the same vector.
      const alone = (await model.embed(['the quick brown fox'])).vectors[0];
      expect(cosine(alone, vectors[0])).to.be.closeTo(1, 1e-5);
      const short = (await model.embed(['a'])).vectors[0];
      expect(cosine(short, vectors[1])).to.be.closeTo(1, 1e-5);
    });

    it(`cuts a long text to ${MAX_TOKENS} tokens, ending in [SEP]`, async () => {
      const long = 'the cat and the dog '.repeat(200);
      const ids = model.tokenize(long);
      expect(ids).to.have.length(MAX_TOKENS);
      expect(ids[0]).to.equal(model.tokenize('')[0]);
      expect(ids[MAX_TOKENS - 1]).to.equal(model.tokenize('')[1]);
      const { vectors, tokens } = await model.embed([long]);
      expect(tokens).to.deep.equal([MAX_TOKENS]);
      expect(vectors[0]).to.have.length(32);
    });
  });

  const cached = (folder: string) =>
    path.join(process.env.TARMAC_CACHE_DIR ?? path.join(os.homedir(), '.cache', 'tarmac'), folder);
  const real = [
    { name: 'all-minilm-l6-v2', maxTokens: MAX_TOKENS },
    { name: 'bge-small-en-v1.5', maxTokens: 512 },
  ];
  for (const { name, maxTokens } of real) {
    describe(`the real ${name}`, () => {
      const dir = cached(LOCAL_EMBEDDING_MODELS.find((m) => m.startsWith(name))!);
      const fixture = JSON.parse(
        fs.readFileSync(path.resolve(__dirname, `../../../../test/fixtures/embeddings/${name}.json`), 'utf8'),
      ) as { sentences: string[]; vectors: number[][] };

      it('agrees with the independent reference vectors (cosine ≥ 0.999)', async function () {
        // Only where tools/obtain-embedding-model.sh (npm test fetches both) has cached the model.
        if (!fs.existsSync(path.join(dir, 'model.onnx'))) this.skip();
        const model = await LocalEmbeddingModel.load(dir, { threads: 2, batchSize: 4 });
        try {
          expect(model.name).to.equal(name);
          expect(model.maxTokens).to.equal(maxTokens);
          const { vectors } = await model.embed(fixture.sentences);
          const agreement = vectors.map((v, i) => cosine(v, fixture.vectors[i]));
          for (const c of agreement) expect(c).to.be.at.least(0.999);
          // And the model means something: a question is nearer its answer than an unrelated sentence.
          const [question, answer, other] = (
            await model.embed([
              'How many days of holiday do I get?',
              'Every employee has 28 days of paid leave a year.',
              'Penguins eat krill.',
            ])
          ).vectors;
          expect(cosine(question, answer)).to.be.above(cosine(question, other) + 0.2);
        } finally {
          await model.close();
        }
      });
    });
  }
});
