// What the api checks of a chat message's images, audio and video before anything is sent: that its model
// takes each kind (MODEL_IMAGE_INPUT, MODEL_AUDIO_INPUT, MODEL_VIDEO_INPUT), and that every URL the provider
// will fetch passes the outbound address policy: a provider on the operator's network (vLLM, Ollama) must not
// be steered by a tenant to the platform's own or private addresses. The platform itself fetches no URL.
import type { Config } from '../../config';
import { MEDIA_SETTINGS, modelMatches, type MediaKind } from '../../config/model-inputs';
import { ModelError, resolveModel } from '../../drivers/model';
import { validationError, type ErrorDetail } from '../../errors';
import { OutboundRefused, outboundPolicyFor } from '../../security/outbound-policy';
import type { MediaUse } from './chat-mapping';

/** `provider/model` as the worker will call it; undefined when no provider serves it (the exchange then says so). */
export function resolvedModelName(config: Config, model: string | null | undefined): string | undefined {
  try {
    const resolved = resolveModel(config.models, model ?? undefined);
    return `${resolved.provider}/${resolved.model}`;
  } catch (err) {
    if (err instanceof ModelError) return undefined;
    throw err;
  }
}

/** Throws a 400 naming every content kind the model does not take, and every URL the policy refuses. */
export async function checkMedia(config: Config, model: string | null | undefined, media: MediaUse[]): Promise<void> {
  if (!media.length) return;
  const name = resolvedModelName(config, model);
  const errors: ErrorDetail[] = [];
  const refusedKinds = new Set<MediaKind>();
  for (const use of media) {
    const kind = use.kind!;
    if (name === undefined || refusedKinds.has(kind) || modelMatches(config.models.inputs[kind], name)) continue;
    refusedKinds.add(kind);
    errors.push({
      message:
        `Model "${name}" does not take ${kind} input (${use.type}); ${MEDIA_SETTINGS[kind]} names the models ` +
        'that do (GET /api/models shows their capabilities)',
      path: use.path,
    });
  }
  if (errors.length) throw validationError(errors);
  const policy = outboundPolicyFor(config);
  for (const use of media) {
    if (!use.url) continue;
    try {
      await policy.checkUrl(use.url);
    } catch (err) {
      const host = new URL(use.url).hostname;
      errors.push({
        message:
          err instanceof OutboundRefused
            ? `The ${use.kind} URL: ${err.message}`
            : `The ${use.kind} URL's host ${host} could not be resolved, so it cannot be checked; send the bytes (base64) instead`,
        path: `${use.path}/artifact/value`,
      });
    }
  }
  if (errors.length) throw validationError(errors);
}
