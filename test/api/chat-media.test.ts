// Images, audio and video in chat messages, through HTTP on the real stack: the contents griptape 1.13's
// GriptapeCloudPromptDriver sends (`Message.to_dict()`: ImageArtifact base64 + format, ImageUrlArtifact URL,
// AudioArtifact base64 + format) reach the local model provider as OpenAI content parts (the double checks
// them as OpenAI does, test/harness/content-parts.ts); a model not named for a kind of content, and a URL the
// outbound address policy refuses, are a 400 before anything is sent.
import { expect } from 'chai';
import { chatRequest as promptDriverRequest, message } from '../harness/chat-requests';
import { as } from '../harness/client';
import { readSse } from '../harness/sse';
import { contentParts } from '../harness/content-parts';
import { configWith, getStack, newTenant, startApi } from '../harness/stack';

const meta = (id: string) => ({ id, reference: null, meta: {}, name: id });
const text = (value: string) => ({
  type: 'TextMessageContent',
  artifact: { type: 'TextArtifact', ...meta('t1'), value },
});
const png = Buffer.from('\x89PNG\r\n\x1a\n not really a picture').toString('base64');
const image = {
  type: 'ImageMessageContent',
  artifact: {
    type: 'ImageArtifact',
    ...meta('i1'),
    name: 'image_artifact_1.png',
    value: png,
    format: 'png',
    width: 1,
    height: 1,
  },
};
const imageAt = (url: string) => ({
  type: 'ImageMessageContent',
  artifact: { type: 'ImageUrlArtifact', ...meta('u1'), value: url },
});
const wav = Buffer.from('RIFF\x24\x00\x00\x00WAVEfmt ').toString('base64');
const audio = {
  type: 'AudioMessageContent',
  artifact: { type: 'AudioArtifact', ...meta('w1'), value: wav, format: 'wav' },
};

/** A request of one user message of `content`, as GriptapeCloudPromptDriver builds it. */
const chatRequest = (model: string, ...content: unknown[]) =>
  promptDriverRequest(model, { messages: [message('user', ...content)] });

describe('chat messages with images and audio', function () {
  this.timeout(120_000);
  let api: Awaited<ReturnType<typeof startApi>>;

  before(async () => {
    // This api's own settings: models `local/vision-*` take images, `local/audio-*` audio; the default one takes images.
    const config = configWith({
      DEFAULT_MODEL: 'local/vision-default',
      MODEL_IMAGE_INPUT: 'local/vision-*',
      MODEL_AUDIO_INPUT: 'local/audio-*',
    });
    api = await startApi(getStack().env.client, 0, config);
  });
  after(async () => api?.close());

  it('sends base64 and URL images to a model that takes images, as image_url parts', async () => {
    const { modelProvider: provider } = getStack();
    const t = await newTenant();
    const model = provider.uniqueModel('vision');
    provider.script({ model, text: 'Two cats.' });
    const url = 'https://203.0.113.7/cat.png'; // a documentation address: the policy allows it, nothing fetches it
    const res = await as(t.key, api.baseUrl).post(
      '/api/chat/messages',
      chatRequest(model, text('What is in these?'), image, imageAt(url)),
    );
    expect(res.status, res.text).to.equal(201);
    expect(res.body.content[0].artifact.value).to.equal('Two cats.');
    const [sent] = provider.requestsFor(model);
    expect(sent.body.messages).to.deep.equal([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in these?' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
          { type: 'image_url', image_url: { url } },
        ],
      },
    ]);
  });

  it('streams an answer about audio sent as an input_audio part', async () => {
    const { modelProvider: provider } = getStack();
    const t = await newTenant();
    const model = provider.uniqueModel('audio');
    provider.script({ model, text: 'You said hello.' });
    const sse = await readSse(`${api.baseUrl}/api/chat/messages/stream`, t.key, {
      body: chatRequest(model, text('Transcribe this'), audio),
    });
    expect(sse.status, JSON.stringify(sse.body)).to.equal(201);
    expect(sse.frames.map((f) => f.data.content?.text ?? '').join('')).to.equal('You said hello.');
    const [sent] = provider.requestsFor(model);
    expect(sent.stream).to.equal(true);
    expect(contentParts(sent.body.messages)).to.deep.equal([
      { type: 'text', text: 'Transcribe this' },
      { type: 'input_audio', input_audio: { data: wav, format: 'wav' } },
    ]);
  });

  it('refuses content a model does not take with a 400 naming the model and the type, sending nothing', async () => {
    const { modelProvider: provider } = getStack();
    const t = await newTenant();
    const client = as(t.key, api.baseUrl);
    const model = provider.uniqueModel('text');
    const res = await client.post('/api/chat/messages', chatRequest(model, text('Look'), image, audio));
    expect(res.status, res.text).to.equal(400);
    expect(res.body.type).to.equal('ValidationError');
    expect(res.body.errors).to.deep.equal([
      {
        message: `Model "local/${model}" does not take image input (ImageMessageContent); MODEL_IMAGE_INPUT names the models that do (GET /api/models shows their capabilities)`,
        path: '/body/messages/0/content/1',
      },
      {
        message: `Model "local/${model}" does not take audio input (AudioMessageContent); MODEL_AUDIO_INPUT names the models that do (GET /api/models shows their capabilities)`,
        path: '/body/messages/0/content/2',
      },
    ]);
    // A model that takes images but not audio, on the streaming route: refused before the stream begins.
    const vision = provider.uniqueModel('vision');
    const streamed = await readSse(`${api.baseUrl}/api/chat/messages/stream`, t.key, {
      body: chatRequest(vision, image, audio),
    });
    expect(streamed.status).to.equal(400);
    expect(streamed.body.errors.map((e: { path: string }) => e.path)).to.deep.equal(['/body/messages/0/content/1']);
    expect(provider.requestsFor(model)).to.deep.equal([]);
    expect(provider.requestsFor(vision)).to.deep.equal([]);
  });

  it('refuses image URLs the outbound address policy refuses, and malformed media, pointing at the member', async () => {
    const { modelProvider: provider } = getStack();
    const t = await newTenant();
    const client = as(t.key, api.baseUrl);
    const model = provider.uniqueModel('vision');
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://127.0.0.1:5432/x.png',
      'http://[::1]/x.png',
    ]) {
      const res = await client.post('/api/chat/messages', chatRequest(model, imageAt(url)));
      expect(res.status, url).to.equal(400);
      expect(res.body.errors[0].path).to.equal('/body/messages/0/content/0/artifact/value');
      expect(res.body.errors[0].message).to.contain('is not an address this platform connects to');
    }
    const notBase64 = await client.post(
      '/api/chat/messages',
      chatRequest(model, { ...image, artifact: { ...image.artifact, value: 'a picture' } }),
    );
    expect(notBase64.status).to.equal(400);
    expect(notBase64.body.errors[0]).to.deep.equal({
      message: 'An ImageArtifact needs its bytes as base64 in `value`',
      path: '/body/messages/0/content/0/artifact/value',
    });
    const video = await client.post(
      '/api/chat/messages',
      chatRequest(model, {
        type: 'VideoMessageContent',
        artifact: { type: 'VideoUrlArtifact', value: 'https://203.0.113.7/a.mp4' },
      }),
    );
    expect(video.status).to.equal(400);
    expect(video.body.errors[0].message).to.contain('does not take video input (VideoMessageContent)');
    expect(provider.requestsFor(model)).to.deep.equal([]);
  });

  it('shows what the configured chat model takes in GET /models', async () => {
    const t = await newTenant();
    const res = await as(t.key, api.baseUrl).get('/api/models?model_type=chat');
    expect(res.status, res.text).to.equal(200);
    expect(
      res.body.models.map((m: { model_name: string; capabilities: string[] }) => [m.model_name, m.capabilities]),
    ).to.deep.equal([['local/vision-default', ['text', 'tools', 'structured_output', 'image']]]);
  });
});
