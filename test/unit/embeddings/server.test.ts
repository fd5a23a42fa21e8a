// The `local` provider's OpenAI-compatible /v1/embeddings over a tiny random BERT: reached through the
// platform's own model driver (as the worker reaches it), texts of concurrent requests sharing inferences
// without mixing up their answers, the refusals in OpenAI's error shape, and the bounded queue (a 429 with
// Retry-After past LOCAL_EMBEDDING_MAX_QUEUED texts, which the model driver waits out and retries), and
// several models served at once, each request answered by the model it names.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { LocalEmbeddingModel } from '../../../src/embeddings/local-model';
import { LocalModels } from '../../../src/embeddings/models';
import { startEmbeddingServer, type EmbeddingServer } from '../../../src/embeddings/server';
import { createModelDriver, ModelError } from '../../../src/drivers/model';
import { tinyEmbeddingModel } from '../../support/tiny-embedding-model';

describe('local embedding server', function () {
  this.timeout(300_000);
  let models: LocalModels;
  let model: LocalEmbeddingModel;
  let server: EmbeddingServer;

  before(async () => {
    models = await LocalModels.open([await tinyEmbeddingModel()], { threads: 2, batchSize: 4 });
    model = await models.get(models.names[0]);
    server = await startEmbeddingServer(models, { host: '127.0.0.1', port: 0, batchSize: 4, maxQueued: 4096 });
  });
  after(async () => {
    await server?.close();
    await models?.close();
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
    expect(health).to.deep.equal({ status: 'ok', model: model.name, models: [model.name] });
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
      const gatedModels = Object.create(models) as LocalModels;
      gatedModels.get = async () => gated;
      small = await startEmbeddingServer(gatedModels, { host: '127.0.0.1', port: 0, batchSize: 4, maxQueued: 40 });
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

  describe('several models', () => {
    let two: LocalModels;
    let both: EmbeddingServer;
    let secondDir: string;
    before(async () => {
      // The same weights under another name, reading 6 tokens at most: which model answered shows in the usage.
      secondDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tarmac-second-model-'));
      const dir = path.join(secondDir, 'tiny-short-1.0');
      fs.cpSync(await tinyEmbeddingModel(), dir, { recursive: true });
      const config = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8')) as object;
      fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ ...config, max_seq_length: 6 }));
      const missing = path.join(secondDir, 'not-obtained-2.0');
      two = await LocalModels.open([await tinyEmbeddingModel(), dir, missing], { threads: 2, batchSize: 4 });
      both = await startEmbeddingServer(two, { host: '127.0.0.1', port: 0, batchSize: 4, maxQueued: 4096 });
    });
    after(async () => {
      await both?.close();
      await two?.close();
      fs.rmSync(secondDir, { recursive: true, force: true });
    });

    it('lists the models present, the default first, and answers each request with the model it names', async () => {
      expect(two.names).to.deep.equal([model.name, 'tiny-short']);
      const listed = (await (await fetch(`${both.url}/models`)).json()) as any;
      expect(listed.data.map((m: any) => m.id)).to.deep.equal([model.name, 'tiny-short']);
      const long = 'the quick brown fox jumps over the lazy dog';
      const ask = (name: string) =>
        fetch(`${both.url}/embeddings`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: name, input: [long, 'a'] }),
        }).then((r) => r.json() as Promise<any>);
      // Concurrent requests of both models share the queue; each pass holds texts of one model only.
      const answers = await Promise.all([ask(model.name), ask('tiny-short'), ask(model.name), ask('tiny-short')]);
      expect(answers.map((a) => [a.model, a.usage.prompt_tokens])).to.deep.equal([
        [model.name, 11 + 3],
        ['tiny-short', 6 + 3],
        [model.name, 11 + 3],
        ['tiny-short', 6 + 3],
      ]);
      const direct = (await model.embed([long])).vectors[0];
      answers[0].data[0].embedding.forEach((x: number, k: number) => expect(x).to.be.closeTo(direct[k], 1e-5));
      const unknown = await fetch(`${both.url}/embeddings`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'not-obtained', input: 'x' }),
      });
      expect(unknown.status).to.equal(404);
      expect(((await unknown.json()) as any).error.message).to.include(`${model.name}, tiny-short`);
    });

    it('refuses to start with no model present', async () => {
      const err = await LocalModels.open([path.join(secondDir, 'none-1.0')], { threads: 1, batchSize: 1 }).catch(
        (e: Error) => e,
      );
      expect(err).to.be.instanceOf(Error);
      expect((err as Error).message).to.include('tools/obtain-embedding-model.sh');
    });
  });
});
