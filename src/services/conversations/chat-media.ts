// Images, audio and video in chat messages: griptape's ImageMessageContent (an ImageArtifact, base64, or an
// ImageUrlArtifact), AudioMessageContent (an AudioArtifact, base64), VideoMessageContent (a VideoUrlArtifact) and
// GenericMessageContent (an OpenAI content part as is) become the content parts of an OpenAI-compatible user
// turn, as griptape's own OpenAI driver sends them: `image_url` (a URL, or a `data:` URL of the bytes),
// `input_audio` and `video_url`. URLs are passed to the provider, never fetched here. Pure functions: the api
// validates with them and checks that the model takes the content (model-inputs.ts); the worker maps with them.
import type { ContentPart } from '../../drivers/model/types';
import type { MediaKind } from '../../config/model-inputs';
import { ChatRequestError, type ContentDict } from './chat-request';

/** The griptape content types this module maps. */
export const MEDIA_CONTENT = [
  'ImageMessageContent',
  'AudioMessageContent',
  'VideoMessageContent',
  'GenericMessageContent',
];

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const FORMAT = /^[a-z0-9.+-]{1,20}$/;
const DATA_IMAGE = /^data:image\/[a-z0-9.+-]{1,20};base64,[A-Za-z0-9+/]*={0,2}$/;

/** A content part as the model gets it, and what kind of content it is (undefined: text). */
export interface MappedPart {
  part: ContentPart;
  kind?: MediaKind;
  /** An http(s) URL the provider will fetch: checked against the outbound address policy by the api. */
  url?: string;
}

const isHttpUrl = (value: string) => {
  try {
    return ['http:', 'https:'].includes(new URL(value).protocol);
  } catch {
    return false;
  }
};

function base64Of(value: unknown, path: string, what: string): string {
  if (typeof value !== 'string' || value === '' || value.length % 4 !== 0 || !BASE64.test(value))
    throw new ChatRequestError(`${what} needs its bytes as base64 in \`value\``, path);
  return value;
}

function formatOf(value: unknown, path: string, what: string): string {
  const format = typeof value === 'string' ? value.toLowerCase() : '';
  if (!FORMAT.test(format)) throw new ChatRequestError(`${what} needs a \`format\` (e.g. png, wav)`, path);
  return format === 'jpg' ? 'jpeg' : format;
}

function imageUrl(value: unknown, path: string): MappedPart {
  if (typeof value === 'string' && DATA_IMAGE.test(value))
    return { part: { kind: 'image', url: value }, kind: 'image' };
  if (typeof value === 'string' && value.length <= 8192 && isHttpUrl(value))
    return { part: { kind: 'image', url: value }, kind: 'image', url: value };
  throw new ChatRequestError(
    'An image URL must be http(s) (at most 8192 characters) or data:image/<format>;base64,...',
    path,
  );
}

function videoUrl(value: unknown, path: string): MappedPart {
  if (typeof value === 'string' && value.length <= 8192 && isHttpUrl(value))
    return { part: { kind: 'video', url: value }, kind: 'video', url: value };
  throw new ChatRequestError('A video URL must be http(s) (at most 8192 characters)', path);
}

/** An OpenAI content part carried by a GenericArtifact (griptape's escape hatch for provider-native parts). */
function genericPart(value: unknown, path: string): MappedPart {
  if (typeof value === 'string') return { part: { kind: 'text', text: value } };
  const part = (value ?? {}) as Record<string, Record<string, unknown> | string | undefined>;
  const inner = (key: string) =>
    (typeof part[key] === 'object' && part[key] ? part[key] : {}) as Record<string, unknown>;
  switch (part.type) {
    case 'text':
      if (typeof part.text === 'string') return { part: { kind: 'text', text: part.text } };
      break;
    case 'image_url': {
      const mapped = imageUrl(inner('image_url').url, `${path}/image_url/url`);
      const detail = inner('image_url').detail;
      if (detail === 'auto' || detail === 'low' || detail === 'high')
        mapped.part = { ...mapped.part, detail } as ContentPart;
      return mapped;
    }
    case 'input_audio': {
      const audio = inner('input_audio');
      const data = base64Of(audio.data, `${path}/input_audio/data`, 'input_audio');
      const format = formatOf(audio.format, `${path}/input_audio/format`, 'input_audio');
      return { part: { kind: 'audio', data, format }, kind: 'audio' };
    }
    case 'video_url':
      return videoUrl(inner('video_url').url, `${path}/video_url/url`);
  }
  throw new ChatRequestError(
    'A GenericArtifact carries text, or an OpenAI content part: {type: "text", text}, {type: "image_url", image_url: {url}}, ' +
      '{type: "input_audio", input_audio: {data, format}} or {type: "video_url", video_url: {url}}',
    path,
  );
}

/**
 * The content part of one image, audio, video or generic content of a message of `role` at `path`
 * (`/body/messages/<m>/content/<c>`). Media belong to user messages; an assistant's audio answer (griptape
 * keeps its transcript) goes back as its transcript, as griptape's OpenAI driver sends an expired one.
 */
export function mediaPart(content: ContentDict, role: string, path: string): MappedPart {
  const artifact = (content.artifact ?? {}) as { type?: unknown; value?: unknown; format?: unknown; meta?: unknown };
  const transcript = (artifact.meta as { transcript?: unknown } | null)?.transcript;
  if (role === 'assistant' && content.type === 'AudioMessageContent' && typeof transcript === 'string')
    return { part: { kind: 'text', text: transcript } };
  if (role !== 'user')
    throw new ChatRequestError(
      `${content.type} belongs to user messages (models take media from the user)`,
      `${path}/type`,
    );
  const at = `${path}/artifact`;
  switch (`${content.type} ${String(artifact.type)}`) {
    case 'ImageMessageContent ImageArtifact': {
      const data = base64Of(artifact.value, `${at}/value`, 'An ImageArtifact');
      const format = formatOf(artifact.format, `${at}/format`, 'An ImageArtifact');
      return { part: { kind: 'image', url: `data:image/${format};base64,${data}` }, kind: 'image' };
    }
    case 'ImageMessageContent ImageUrlArtifact':
      return imageUrl(artifact.value, `${at}/value`);
    case 'AudioMessageContent AudioArtifact': {
      const data = base64Of(artifact.value, `${at}/value`, 'An AudioArtifact');
      return {
        part: { kind: 'audio', data, format: formatOf(artifact.format, `${at}/format`, 'An AudioArtifact') },
        kind: 'audio',
      };
    }
    case 'VideoMessageContent VideoUrlArtifact':
      return videoUrl(artifact.value, `${at}/value`);
    case 'GenericMessageContent GenericArtifact':
      return genericPart(artifact.value, `${at}/value`);
  }
  const expected = {
    ImageMessageContent: 'an ImageArtifact or ImageUrlArtifact',
    AudioMessageContent: 'an AudioArtifact',
    VideoMessageContent: 'a VideoUrlArtifact',
    GenericMessageContent: 'a GenericArtifact',
  }[content.type];
  throw new ChatRequestError(`${content.type} carries ${expected}, not ${String(artifact.type)}`, `${at}/type`);
}
