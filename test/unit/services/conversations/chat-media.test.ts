// Images, audio, video and generic contents of chat messages as OpenAI content parts
// (src/services/conversations/chat-media.ts through toTurns). The contents are griptape 1.13's
// `Message.to_dict()` shapes: ImageArtifact/AudioArtifact values base64, ImageUrlArtifact/VideoUrlArtifact URLs.
import { expect } from 'chai';
import { ChatRequestError, toTurns, type MediaUse } from '../../../../src/services/conversations/chat-mapping';
import { mediaPart } from '../../../../src/services/conversations/chat-media';
import { toMessage } from '../../../../src/drivers/model/openai-compatible';

const text = (value: string) => ({ type: 'TextMessageContent', artifact: { type: 'TextArtifact', value } });
const png = Buffer.from('\x89PNG\r\n\x1a\nfake').toString('base64');
const image = {
  type: 'ImageMessageContent',
  artifact: { type: 'ImageArtifact', value: png, format: 'png', width: 1, height: 1 },
};
const imageUrl = {
  type: 'ImageMessageContent',
  artifact: { type: 'ImageUrlArtifact', value: 'https://203.0.113.7/cat.png' },
};
const audio = { type: 'AudioMessageContent', artifact: { type: 'AudioArtifact', value: 'UklGRg==', format: 'wav' } };
const video = {
  type: 'VideoMessageContent',
  artifact: { type: 'VideoUrlArtifact', value: 'https://203.0.113.7/a.mp4' },
};
const generic = (value: unknown) => ({ type: 'GenericMessageContent', artifact: { type: 'GenericArtifact', value } });

function refused(fn: () => unknown): ChatRequestError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ChatRequestError) return err;
    throw err;
  }
  throw new Error('expected a ChatRequestError');
}

describe('chat media: images, audio and video as OpenAI content parts', () => {
  it('makes a user message with media one turn of parts, in order, in the OpenAI wire format', () => {
    const media: MediaUse[] = [];
    const turns = toTurns(
      [{ role: 'user', content: [text('What is in these?'), image, imageUrl, audio, video] }],
      media,
    );
    expect(turns).to.have.length(1);
    expect(toMessage(turns[0])).to.deep.equal({
      role: 'user',
      content: [
        { type: 'text', text: 'What is in these?' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
        { type: 'image_url', image_url: { url: 'https://203.0.113.7/cat.png' } },
        { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
        { type: 'video_url', video_url: { url: 'https://203.0.113.7/a.mp4' } },
      ],
    });
    expect(media.map((m) => [m.kind, m.type, m.path, m.url])).to.deep.equal([
      ['image', 'ImageMessageContent', '/body/messages/0/content/1', undefined],
      ['image', 'ImageMessageContent', '/body/messages/0/content/2', 'https://203.0.113.7/cat.png'],
      ['audio', 'AudioMessageContent', '/body/messages/0/content/3', undefined],
      ['video', 'VideoMessageContent', '/body/messages/0/content/4', 'https://203.0.113.7/a.mp4'],
    ]);
  });

  it('keeps text-only user turns a string, and sends an assistant audio answer as its transcript', () => {
    const turns = toTurns([
      { role: 'user', content: [text('hi')] },
      {
        role: 'assistant',
        content: [
          {
            type: 'AudioMessageContent',
            artifact: { type: 'AudioArtifact', value: 'UklGRg==', format: 'wav', meta: { transcript: 'Hello!' } },
          },
        ],
      },
    ]);
    expect(turns).to.deep.equal([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'Hello!' },
    ]);
  });

  it('passes OpenAI content parts carried by a GenericArtifact, and its text', () => {
    const media: MediaUse[] = [];
    const turns = toTurns(
      [
        {
          role: 'user',
          content: [
            generic('plain words'),
            generic({ type: 'image_url', image_url: { url: 'https://203.0.113.7/x.jpg', detail: 'low' } }),
            generic({ type: 'input_audio', input_audio: { data: 'SUQz', format: 'mp3' } }),
          ],
        },
      ],
      media,
    );
    expect(turns[0].content).to.deep.equal([
      { kind: 'text', text: 'plain words' },
      { kind: 'image', url: 'https://203.0.113.7/x.jpg', detail: 'low' },
      { kind: 'audio', data: 'SUQz', format: 'mp3' },
    ]);
    expect(media.map((m) => m.kind)).to.deep.equal(['image', 'audio']);
    const other = refused(() => toTurns([{ role: 'user', content: [generic({ type: 'file', file: {} })] }]));
    expect(other.path).to.equal('/body/messages/0/content/0/artifact/value');
    expect(other.message).to.contain('an OpenAI content part');
  });

  it('refuses media it cannot carry, pointing at the member at fault', () => {
    const at = (content: unknown, role = 'user') => refused(() => mediaPart(content as never, role, '/p'));
    expect(at({ ...image, artifact: { ...image.artifact, value: 'not base64!' } }).path).to.equal('/p/artifact/value');
    expect(at({ ...image, artifact: { ...image.artifact, format: undefined } }).path).to.equal('/p/artifact/format');
    expect(at({ ...imageUrl, artifact: { ...imageUrl.artifact, value: 'file:///etc/passwd' } }).message).to.contain(
      'must be http(s)',
    );
    expect(at({ ...video, artifact: { ...video.artifact, value: 'data:video/mp4;base64,AAAA' } }).path).to.equal(
      '/p/artifact/value',
    );
    expect(at({ type: 'ImageMessageContent', artifact: { type: 'TextArtifact', value: 'x' } }).message).to.equal(
      'ImageMessageContent carries an ImageArtifact or ImageUrlArtifact, not TextArtifact',
    );
    const inSystem = at(image, 'system');
    expect(inSystem.message).to.contain('belongs to user messages');
    expect(inSystem.path).to.equal('/p/type');
    expect(at(audio, 'assistant').message).to.contain('belongs to user messages');
  });
});
