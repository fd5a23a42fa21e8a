/**
 * OpenAI's chat content parts as the model provider double (model-provider.ts) checks them: a message's
 * `content` is a string, or an array of parts: `{type: "text", text}`, `{type: "image_url", image_url: {url,
 * detail?}}` (an http(s) URL, or `data:image/<format>;base64,<data>`), `{type: "input_audio", input_audio: {data
 * (base64), format: "wav" | "mp3"}}`, and vLLM's `{type: "video_url", video_url: {url}}`. Images, audio and
 * video only in user messages (OpenAI answers 400 `invalid_request_error` for the rest, naming the param).
 *
 *   const problem = contentProblem(body.messages);      // undefined, or {message, param} for the 400
 *   const parts = contentParts(body.messages);          // every part of every array content, in order
 */
export interface ContentProblem {
  message: string;
  /** OpenAI's `param`, e.g. `messages.[1].content.[0].image_url.url`. */
  param: string;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const isBase64 = (v: unknown) => typeof v === 'string' && v.length > 0 && v.length % 4 === 0 && BASE64.test(v);
const isHttp = (v: unknown) => typeof v === 'string' && /^https?:\/\/[^\s/]+/.test(v);
const isDataImage = (v: unknown) =>
  typeof v === 'string' && /^data:image\/[a-z0-9.+-]+;base64,/.test(v) && isBase64(v.slice(v.indexOf(',') + 1));

function partProblem(part: any, role: string, param: string): ContentProblem | undefined {
  const media = ['image_url', 'input_audio', 'video_url'];
  if (media.includes(part?.type) && role !== 'user')
    return { message: `Invalid content part: ${part.type} is only allowed in user messages.`, param };
  switch (part?.type) {
    case 'text':
      return typeof part.text === 'string' ? undefined : { message: 'text must be a string.', param: `${param}.text` };
    case 'image_url': {
      const url = part.image_url?.url;
      if (!isHttp(url) && !isDataImage(url))
        return {
          message: "Invalid 'image_url': expected a URL or a base64 data URL.",
          param: `${param}.image_url.url`,
        };
      if (part.image_url.detail !== undefined && !['auto', 'low', 'high'].includes(part.image_url.detail))
        return { message: 'Invalid image detail.', param: `${param}.image_url.detail` };
      return undefined;
    }
    case 'input_audio':
      if (!isBase64(part.input_audio?.data))
        return { message: 'Invalid input_audio data: expected base64.', param: `${param}.input_audio.data` };
      if (!['wav', 'mp3'].includes(part.input_audio.format))
        return {
          message: "Invalid input_audio format: expected 'wav' or 'mp3'.",
          param: `${param}.input_audio.format`,
        };
      return undefined;
    case 'video_url':
      return isHttp(part.video_url?.url)
        ? undefined
        : { message: 'Invalid video_url: expected a URL.', param: `${param}.video_url.url` };
    default:
      return {
        message: `Invalid value: '${String(part?.type)}'. Supported content types: text, image_url, input_audio, video_url.`,
        param: `${param}.type`,
      };
  }
}

/** Why OpenAI would refuse these messages' content, or undefined. */
export function contentProblem(messages: Array<Record<string, any>>): ContentProblem | undefined {
  for (const [m, message] of messages.entries()) {
    const content = message?.content;
    if (content === undefined || content === null || typeof content === 'string') continue;
    if (!Array.isArray(content))
      return { message: 'content must be a string or an array.', param: `messages.[${m}].content` };
    for (const [c, part] of content.entries()) {
      const problem = partProblem(part, message.role, `messages.[${m}].content.[${c}]`);
      if (problem) return problem;
    }
  }
  return undefined;
}

/** Every part of every array content, in order. */
export function contentParts(messages: Array<Record<string, any>>): Array<Record<string, any>> {
  return messages.flatMap((m) => (Array.isArray(m?.content) ? m.content : []));
}

/** The words of a message's text: a string content, or its text parts. */
export function textWords(content: unknown): number {
  const text =
    typeof content === 'string'
      ? content
      : Array.isArray(content)
        ? content.map((p) => (p?.type === 'text' ? p.text : '')).join(' ')
        : '';
  return String(text).split(/\s+/).filter(Boolean).length;
}
