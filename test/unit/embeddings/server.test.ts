// The `local` provider's OpenAI-compatible /v1/embeddings over a tiny random BERT: reached through the
// platform's own model driver (as the worker reaches it), texts of concurrent requests sharing inferences
// without mixing up their answers, the refusals in OpenAI's error shape, and the bounded queue (a 429 with
// Retry-After past LOCAL_EMBEDDING_MAX_QUEUED texts, which the model driver waits out and retries).
import { expect } from 'chai';
import { LocalEmbeddingModel } from '../../../src/embeddings/local-model';
import { startEmbeddingServer, type EmbeddingServer } from '../../../src/embeddings/server';
import { createModelDriver, ModelError } from '../../../src/drivers/model';
import { tinyEmbeddingModel } from '../../support/tiny-embedding-model';

describe('local embedding server', function () {
  this.timeout(300_000);
  let model: LocalEmbeddingModel;
  let server: EmbeddingServer;

  before(async () => {
    model = await LocalEmbeddingModel.load(await tinyEmbeddingModel(), { threads: 2, batchSize: 4 });
    server = await startEmbeddingServer(model, { host: '127.0.0.1', port: 0, batchSize: 4, maxQueued: 4096 });
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

  describe('its queue, bounded by maxQueued texts', () => {
    let small: EmbeddingServer;
    // The real model behind a gate the test opens: the queue stays full exactly as long as the test wants.
    let gate: Promise<void> = Promise.resolve();
    let openGate = () => undefined as void;
    let inferring: Promise<void> = Promise.resolve();
    let inferenceStarted = () => undefined as void;
    const closeGate = () => {
      gate = new Promise((resolve) => (openGate = resolve));
      inferring = new Promise((resolve) => (inferenceStarted = resolve));
    };
    before(async () => {
      const gated = Object.create(model) as LocalEmbeddingModel;
      gated.embed = async (input: string[]) => {
        inferenceStarted();
        await gate;
        return model.embed(input);
      };
      small = await startEmbeddingServer(gated, { host: '127.0.0.1', port: 0, batchSize: 4, maxQueued: 40 });
    });
    afterEach(() => openGate()); // a failed test leaves nothing waiting behind the gate
    after(() => small?.close());

    const postTo = (input: string[]) =>
      fetch(`${small.url}/embeddings`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: model.name, input }),
      });
    const texts = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `the quick fox ${tag} ${i}`);

    it('takes a request larger than the bound when nothing waits, and refuses one that would pass it: 429, Retry-After', async () => {
      closeGate();
      const first = postTo(texts(100, 'a')); // alone in an empty queue: taken whole
      await inferring; // its first pass is in the model
      const second = await postTo(texts(10, 'b'));
      expect(second.status).to.equal(429);
      expect(Number(second.headers.get('retry-after'))).to.be.within(1, 60);
      const body = (await second.json()) as any;
      expect(body.error.type).to.equal('rate_limit_exceeded');
      // The first text started a pass of its own as it was queued; the other 99 wait behind it.
      expect(body.error.message).to.include('99 texts waiting').and.include('LOCAL_EMBEDDING_MAX_QUEUED (40)');
      openGate();
      expect(((await (await first).json()) as any).data).to.have.length(100);
      // Once the queue drained, the same request is taken.
      expect((await postTo(texts(10, 'b'))).status).to.equal(200);
    });

    it('the model driver waits out the Retry-After and retries; with no retries left it is a clear error', async () => {
      const driverWith = (maxRetries: number) =>
        createModelDriver({
          providers: { local: { baseUrl: small.url } },
          defaultEmbeddingModel: `local/${model.name}`,
          timeoutSeconds: 30,
          maxRetries,
        });
      closeGate();
      const busy = postTo(texts(100, 'c'));
      await inferring;
      const refused = await driverWith(0)
        .embed({ model: `local/${model.name}`, input: texts(20, 'd') })
        .catch((err: unknown) => err);
      expect(refused).to.be.instanceOf(ModelError);
      expect((refused as ModelError).kind).to.equal('unreachable');
      expect((refused as ModelError).message)
        .to.include('429')
        .and.include('LOCAL_EMBEDDING_MAX_QUEUED');
      const waited = driverWith(3).embed({ model: `local/${model.name}`, input: texts(20, 'e') });
      setTimeout(openGate, 200); // refused first (the queue is full), taken on a retry once it drained
      expect((await waited).vectors).to.have.length(20);
      expect(((await (await busy).json()) as any).data).to.have.length(100);
    });
  });
});
