// Which chat models take which content besides text: images, audio, video. A setting per content type names
// the models (`provider/model`, a trailing `*` matching any rest); the api refuses a chat message with content
// its model does not take (400) before anything is sent. Without a setting, known OpenAI models take what
// OpenAI documents (provider `openai`); every other model is text-only until the operator names it.
import type { EnvReader } from './env';

/** Content besides text (and tool calls) that a chat message can carry to a model. */
export const MEDIA_KINDS = ['image', 'audio', 'video'] as const;
export type MediaKind = (typeof MEDIA_KINDS)[number];

/** By content type: `provider/model` patterns of the models that take it. */
export type ModelInputs = Record<MediaKind, readonly string[]>;

export const MEDIA_SETTINGS: Record<MediaKind, string> = {
  image: 'MODEL_IMAGE_INPUT',
  audio: 'MODEL_AUDIO_INPUT',
  video: 'MODEL_VIDEO_INPUT',
};

/** OpenAI's chat models with image input (not o1-mini, o3-mini: text only), and with audio input. */
export const DEFAULT_MODEL_INPUTS: ModelInputs = {
  image: [
    'openai/gpt-4o',
    'openai/gpt-4o-2*',
    'openai/gpt-4o-mini',
    'openai/gpt-4o-mini-2*',
    'openai/chatgpt-4o-latest',
    'openai/gpt-4-turbo*',
    'openai/gpt-4.1*',
    'openai/gpt-4.5*',
    'openai/gpt-5*',
    'openai/o1',
    'openai/o1-2*',
    'openai/o3',
    'openai/o3-2*',
    'openai/o3-pro*',
    'openai/o4-mini*',
  ],
  audio: ['openai/gpt-4o-audio-preview*', 'openai/gpt-4o-mini-audio-preview*', 'openai/gpt-audio*'],
  video: [],
};

const PATTERN = /^[a-z0-9_-]+\/(\*|[^\s*]+\*?)$/;

export function readModelInputs(env: EnvReader): ModelInputs {
  const read = (kind: MediaKind): readonly string[] => {
    const setting = MEDIA_SETTINGS[kind];
    if (env.optional(setting) === undefined) return DEFAULT_MODEL_INPUTS[kind];
    if (env.optional(setting) === 'none') return [];
    const patterns = env.list(setting);
    for (const p of patterns.filter((p) => !PATTERN.test(p)))
      env.problem(
        `${setting} entries must be provider/model, a trailing * matching any rest (e.g. ollama/llava*), or the ` +
          `whole setting "none"; got ${JSON.stringify(p)}`,
      );
    return patterns.filter((p) => PATTERN.test(p));
  };
  return { image: read('image'), audio: read('audio'), video: read('video') };
}

/** Whether `model` (`provider/model`) is named by one of `patterns`. */
export function modelMatches(patterns: readonly string[], model: string): boolean {
  return patterns.some((p) => (p.endsWith('*') ? model.startsWith(p.slice(0, -1)) : model === p));
}
