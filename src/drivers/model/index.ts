// The model driver the worker uses: routes each request to the provider its model name resolves to.
// Every configured provider speaks the OpenAI chat-completions protocol (openai-compatible.ts).
import type { ModelsConfig } from '../../config';
import { OpenAICompatibleDriver } from './openai-compatible';
import { ModelError, type CompletionRequest, type EmbeddingRequest, type ModelDriver } from './types';

export * from './types';

/** What the driver needs of the model settings (not which content each model takes: the api checks that). */
type ProviderSettings = Omit<ModelsConfig, 'inputs'>;

const HOW_TO_CONFIGURE =
  'Set MODEL_PROVIDERS (name=baseURL,...) and DEFAULT_MODEL (provider/model) for the worker, e.g. ' +
  'OPENAI_API_KEY=sk-... DEFAULT_MODEL=openai/gpt-4.1-mini for OpenAI, or ' +
  'MODEL_PROVIDERS=ollama=http://127.0.0.1:11434/v1 DEFAULT_MODEL=ollama/llama3.2 for a local Ollama.';

/**
 * Which provider serves `model`, and under which name. `p/m` with `p` a configured provider is model `m` of
 * `p`; any other name (no slash, or a prefix that is no provider, like `meta-llama/Llama-3.1-8B` on vLLM) is
 * the whole name on the default model's provider; no name is DEFAULT_MODEL.
 */
export function resolveModel(models: ProviderSettings, model?: string): { provider: string; model: string } {
  const name = model?.trim() || undefined;
  const slash = name?.indexOf('/') ?? -1;
  if (name && slash > 0 && Object.hasOwn(models.providers, name.slice(0, slash)) && slash < name.length - 1) {
    return { provider: name.slice(0, slash), model: name.slice(slash + 1) };
  }
  const configured = Object.keys(models.providers);
  if (!models.defaultModel) {
    const what = name ? `Model "${name}" names no configured model provider` : 'No model was given';
    const state = configured.length
      ? `configured providers: ${configured.join(', ')}; DEFAULT_MODEL is not set`
      : 'no model provider is configured';
    throw new ModelError('not-configured', `${what} (${state}). ${HOW_TO_CONFIGURE}`);
  }
  const d = models.defaultModel.indexOf('/');
  const provider = models.defaultModel.slice(0, d);
  return { provider, model: name ?? models.defaultModel.slice(d + 1) };
}

/** One driver per configured provider, chosen per request by `resolveModel`. */
export function createModelDriver(models: ProviderSettings): ModelDriver {
  const drivers = new Map<string, OpenAICompatibleDriver>();
  const driverFor = (provider: string) => {
    let driver = drivers.get(provider);
    if (!driver) {
      driver = new OpenAICompatibleDriver(provider, models.providers[provider], {
        timeoutSeconds: models.timeoutSeconds,
        maxRetries: models.maxRetries,
      });
      drivers.set(provider, driver);
    }
    return driver;
  };
  return {
    async complete(request: CompletionRequest, onDelta) {
      const { provider, model } = resolveModel(models, request.model);
      return driverFor(provider).complete({ ...request, model }, onDelta);
    },
    async embed(request: EmbeddingRequest) {
      const { provider, model } = resolveModel(models, request.model);
      return driverFor(provider).embed({ ...request, model });
    },
  };
}

/**
 * Whether `complete()` failed because its `signal` was aborted: it then rejects with an Error named
 * `AbortError` (its `cause` is the signal's reason), after the HTTP request or stream was closed.
 */
export function isAbortError(err: unknown): boolean {
  return err instanceof Error && err.name === 'AbortError';
}
