// The `local` provider's OpenAI-compatible /v1/embeddings over a tiny random BERT: reached through the
// platform's own model driver (as the worker reaches it), texts of concurrent requests sharing inferences
// without mixing up their answers, and the refusals in OpenAI's error shape.
import { expect } from 'chai';
import { LocalEmbeddingModel } from '../../../src/embeddings/local-model';
import { startEmbeddingServer, type EmbeddingServer } from '../../../src/embeddings/server';
import { createModelDriver } from '../../../src/drivers/model';
import { tinyEmbeddingModel } from '../../support/tiny-embedding-model';

describe('local embedding server', function () {
  this.timeout(300_000);
  let model: LocalEmbeddingModel;
  let server: EmbeddingServer;

  before(async () => {
    model = await LocalEmbeddingModel.load(await tinyEmbeddingModel(), { threads: 2, batchSize: 4 });
    server = await startEmbeddingServer(model, { host: '127.0.0.1', port: 0, batchSize: 4 });
  });
  after(async () => {
    await server?.close();
    await model?.close();
  });

  const post = (body: unknown) =>
    fetch(`${server.url}/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  it('answers the model driver as provider `local`, with usage', async () => {
    const driver = createModelDriver({
      providers: { local: { baseUrl: server.url } },
      defaultEmbeddingModel: `local/${model.name}`,
      timeoutSeconds: 30,
      maxRetries: 0,
    });
    const texts = ['the quick brown fox', 'paris is the capital of france'];
    const answer = await driver.embed({ model: `local/${model.name}`, input: texts });
    expect(answer.model).to.equal(`local/${model.name}`);
    // Batched as two texts padded to one width or not: the same vectors to float32 rounding.
    const direct = (await model.embed(texts)).vectors;
    answer.vectors.forEach((v, i) => v.forEach((x, k) => expect(x).to.be.closeTo(direct[i][k], 1e-5)));
    expect(answer.inputTokens).to.equal(6 + 8); // [CLS] … [SEP] around 4 and 6 words
  });

  it('batches texts of concurrent requests together and gives each request its own vectors, in order', async () => {
    const requests = Array.from({ length: 12 }, (_, i) => [`the cat ${i}`, 'a dog'.repeat(i + 1), `fox ${i} jumps`]);
    const expected = await Promise.all(requests.map((input) => model.embed(input)));
    const answers = await Promise.all(
      requests.map((input) => post({ model: model.name, input }).then((r) => r.json())),
    );
    answers.forEach((answer: any, i) => {
      expect(answer.data.map((d: any) => d.index)).to.deep.equal([0, 1, 2]);
      answer.data.forEach((d: any, j: number) =>
        d.embedding.forEach((v: number, k: number) => expect(v).to.be.closeTo(expected[i].vectors[j][k], 1e-5)),
      );
    });
    const single = (await (await post({ model: model.name, input: 'the cat 0' })).json()) as any;
    expect(single.data).to.have.length(1);
  });

  it('refuses an unknown model, a malformed input and other routes in OpenAI’s error shape', async () => {
    const unknown = await post({ model: 'text-embedding-3-small', input: 'x' });
    expect(unknown.status).to.equal(404);
    expect(((await unknown.json()) as any).error.message).to.include(model.name);
    for (const bad of [
      { model: model.name },
      { model: model.name, input: [] },
      { model: model.name, input: [1] },
      'not json',
    ]) {
      const res = await post(bad);
      expect(res.status, JSON.stringify(bad)).to.equal(400);
      expect(((await res.json()) as any).error.type).to.equal('invalid_request_error');
    }
    const tooMany = await post({ model: model.name, input: new Array(2049).fill('a') });
    expect(tooMany.status).to.equal(400);
    expect((await fetch(`${server.url}/chat/completions`, { method: 'POST' })).status).to.equal(404);
    const health = await (await fetch(server.url.replace(/\/v1$/, '/health'))).json();
    expect(health).to.deep.equal({ status: 'ok', model: model.name });
  });
});
