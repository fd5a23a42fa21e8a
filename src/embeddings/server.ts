// The `local` model provider: an OpenAI-compatible `POST /v1/embeddings` over the local models (models.ts), so
// the worker's model driver reaches them exactly as it reaches OpenAI or Ollama (provider `local`).
//
// Texts from concurrent requests share inferences: they wait in one queue, and each inference takes up
// to BATCHES_PER_PASS batches' worth of the model of the text at its head (a query's single text rides along
// with an ingestion's batch instead of waiting for a pass of its own). One pass at a time: onnxruntime already spreads one
// inference over all the threads it was given.
//
// The queue is bounded (LOCAL_EMBEDDING_MAX_QUEUED texts): a request that would pass the bound is refused whole
// with a 429 and a Retry-After of the time the queue ahead of it takes at the measured rate, which the model
// driver (the openai package) waits and retries; past its retries the ingestion records the asset's error.
// A request that finds the queue empty is always taken, so one request of MAX_INPUTS texts always fits.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LocalModels } from './models';

/** Texts one request may carry (OpenAI's own limit), and the largest body read. */
export const MAX_INPUTS = 2048;
const MAX_BODY_BYTES = 16 * 1024 * 1024;
/** Texts per pass = batch size × this: enough to sort by length before cutting batches. */
const BATCHES_PER_PASS = 4;
/** The longest Retry-After given: the openai package waits for one of at most 60 s. */
const MAX_RETRY_AFTER_SECONDS = 60;

interface Pending {
  model: string;
  text: string;
  done: (result: { vector: number[]; tokens: number } | Error) => void;
}

/** Up to `size` texts of the model of the head of the queue, taken out of it in their order. */
function takePass(queue: Pending[], size: number): Pending[] {
  const model = queue[0].model;
  const pass: Pending[] = [];
  for (let i = 0; i < queue.length && pass.length < size;) {
    if (queue[i].model === model) pass.push(...queue.splice(i, 1));
    else i++;
  }
  return pass;
}

export interface EmbeddingServer {
  /** Base URL of the OpenAI-compatible API, `http://host:port/v1`. */
  url: string;
  close(): Promise<void>;
}

export async function startEmbeddingServer(
  models: LocalModels,
  options: { host: string; port: number; batchSize: number; maxQueued: number },
): Promise<EmbeddingServer> {
  const queue: Pending[] = [];
  let draining = false;
  /** Texts per second of the passes so far (a moving average); until the first pass, a guess of 50. */
  let textsPerSecond = 50;
  const drain = async () => {
    if (draining) return;
    draining = true;
    while (queue.length) {
      const pass = takePass(queue, options.batchSize * BATCHES_PER_PASS);
      try {
        const started = performance.now();
        const model = await models.get(pass[0].model);
        const { vectors, tokens } = await model.embed(pass.map((p) => p.text));
        const rate = pass.length / Math.max(0.001, (performance.now() - started) / 1000);
        textsPerSecond = 0.8 * textsPerSecond + 0.2 * rate;
        pass.forEach((p, i) => p.done({ vector: vectors[i], tokens: tokens[i] }));
      } catch (err) {
        pass.forEach((p) => p.done(err instanceof Error ? err : new Error(String(err))));
      }
    }
    draining = false;
  };
  const embed = (model: string, text: string) =>
    new Promise<{ vector: number[]; tokens: number }>((resolve, reject) => {
      queue.push({ model, text, done: (r) => (r instanceof Error ? reject(r) : resolve(r)) });
      void drain();
    });

  const server = http.createServer((req, res) => {
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const refuse = (status: number, message: string) =>
      reply(status, { error: { message, type: 'invalid_request_error' } });
    const route = `${req.method} ${(req.url ?? '').split('?')[0]}`;
    if (route === 'GET /health') return reply(200, { status: 'ok', model: models.names[0], models: models.names });
    if (route === 'GET /v1/models') {
      return reply(200, {
        object: 'list',
        data: models.names.map((id) => ({ id, object: 'model', owned_by: 'local' })),
      });
    }
    if (route !== 'POST /v1/embeddings') return refuse(404, `No route ${route}`);
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        refuse(413, `The body is larger than ${MAX_BODY_BYTES} bytes`);
        req.destroy();
      } else chunks.push(chunk);
    });
    req.on('end', () => {
      if (res.headersSent) return;
      let body: { model?: unknown; input?: unknown; encoding_format?: unknown };
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof body;
      } catch {
        return refuse(400, 'The body is not JSON');
      }
      const input = typeof body.input === 'string' ? [body.input] : body.input;
      const model = typeof body.model === 'string' && models.has(body.model) ? body.model : undefined;
      if (!model) {
        return refuse(
          404,
          `The model ${JSON.stringify(body.model)} does not exist; this server has ${models.names.join(', ')}`,
        );
      }
      if (!Array.isArray(input) || !input.length || !input.every((t) => typeof t === 'string')) {
        return refuse(400, '`input` must be a string or a non-empty array of strings');
      }
      if (input.length > MAX_INPUTS) return refuse(400, `At most ${MAX_INPUTS} inputs per request`);
      if (queue.length && queue.length + input.length > options.maxQueued) {
        const wait = Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(1, Math.ceil(queue.length / textsPerSecond)));
        res.setHeader('retry-after', String(wait));
        return reply(429, {
          error: {
            message:
              `The local embedding server has ${queue.length} texts waiting; ${input.length} more would pass ` +
              `LOCAL_EMBEDDING_MAX_QUEUED (${options.maxQueued}). Retry after ${wait} s.`,
            type: 'rate_limit_exceeded',
          },
        });
      }
      const base64 = body.encoding_format === 'base64';
      Promise.all((input as string[]).map((text) => embed(model, text))).then(
        (results) =>
          reply(200, {
            object: 'list',
            model,
            data: results.map((r, index) => ({
              object: 'embedding',
              index,
              embedding: base64 ? Buffer.from(new Float32Array(r.vector).buffer).toString('base64') : r.vector,
            })),
            usage: {
              prompt_tokens: results.reduce((n, r) => n + r.tokens, 0),
              total_tokens: results.reduce((n, r) => n + r.tokens, 0),
            },
          }),
        (err: Error) => reply(500, { error: { message: err.message, type: 'server_error' } }),
      );
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}/v1`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
