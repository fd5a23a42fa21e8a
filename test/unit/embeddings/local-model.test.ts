// The local embedding model: a tiny random BERT shows the mechanics (unit vectors, padding that changes
// nothing, truncation at MAX_TOKENS); the real all-MiniLM-L6-v2, when tools/obtain-embedding-model.sh has
// cached it, must agree with reference vectors computed independently (tools/embedding-model/reference.py:
// numpy over the safetensors weights, Hugging Face's Rust tokenizer) to cosine ≥ 0.999.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { LocalEmbeddingModel, MAX_TOKENS } from '../../../src/embeddings/local-model';
import { LOCAL_EMBEDDING_MODEL } from '../../../src/config/local-embeddings';
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

  describe('the real all-MiniLM-L6-v2', () => {
    const dir = path.join(
      process.env.TARMAC_CACHE_DIR ?? path.join(os.homedir(), '.cache', 'tarmac'),
      LOCAL_EMBEDDING_MODEL,
    );
    const fixture = JSON.parse(
      fs.readFileSync(path.resolve(__dirname, '../../../../test/fixtures/embeddings/all-minilm-l6-v2.json'), 'utf8'),
    ) as { sentences: string[]; vectors: number[][] };

    it('agrees with the independent reference vectors (cosine ≥ 0.999)', async function () {
      // Only where tools/obtain-embedding-model.sh (npm start) has cached the weights: 90 MB, a minute to make.
      if (!fs.existsSync(path.join(dir, 'model.onnx'))) this.skip();
      const model = await LocalEmbeddingModel.load(dir, { threads: 2, batchSize: 4 });
      try {
        expect(model.name).to.equal('all-minilm-l6-v2');
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
});
