// Model providers (OpenAI-compatible, src/drivers/model) and the work that calls them: assistant runs, chat
// messages, knowledge base jobs.
import type { EnvReader, JobLimits } from './env';
import { readModelInputs, type ModelInputs } from './model-inputs';

export interface ModelsConfig {
  /** By provider name ([a-z0-9_-]+): the base URL of its OpenAI-compatible API (`.../v1`) and its key. */
  providers: Record<string, { baseUrl: string; apiKey?: string }>;
  /** `provider/model`, its provider configured: the model of requests that name none or no known provider. */
  defaultModel?: string;
  /**
   * `provider/model` that knowledge bases embed with (DEFAULT_EMBEDDING_MODEL; `openai/text-embedding-3-small`
   * when unset and OPENAI_API_KEY is set; else `local/all-minilm-l6-v2` when LOCAL_EMBEDDINGS_URL is set).
   * Undefined: knowledge bases are full-text only.
   */
  defaultEmbeddingModel?: string;
  /** By content type (image, audio, video): the chat models that take it (MODEL_IMAGE_INPUT, ...). */
  inputs: ModelInputs;
  /** Per attempt: waiting for the provider's answer headers, and the longest silence inside a stream. */
  timeoutSeconds: number;
  /** Retries of the openai package (connection errors, 408, 409, 429, 5xx), all before any data is streamed. */
  maxRetries: number;
}

export interface ModelSettings {
  /** OpenAI-compatible model providers for assistant runs and chat messages (src/drivers/model). */
  models: ModelsConfig;
  /** Model calls per assistant run; a run still calling functions after that many ends FAILED. */
  assistantMaxSteps: number;
  /**
   * One chat message exchange: its wall time (CHAT_MESSAGE_TIME_LIMIT_SECONDS, a workflow timer); the
   * non-streaming route waits about this long.
   */
  chatMessageJob: JobLimits;
  /** One knowledge base job: its wall time (KNOWLEDGE_BASE_JOB_TIME_LIMIT_SECONDS, a workflow timer); then FAILED. */
  knowledgeBaseJob: JobLimits;
  /**
   * A knowledge base job's text extraction, on threads of its own
   * (src/services/knowledge/documents/extract-isolated.ts): the heap of one thread (MiB), the wall time of one
   * asset, and the threads of one worker. An asset past a limit is its ExtractionLimitExceeded error; the worker
   * goes on.
   */
  documentExtraction: { memoryMb: number; timeSeconds: number; threads: number };
}

const OPENAI_BASE_URL = 'https://api.openai.com/v1';
/** The provider LOCAL_EMBEDDINGS_URL configures, and the model it serves (src/embeddings). */
export const LOCAL_PROVIDER = 'local';
export const LOCAL_EMBEDDING_DEFAULT = 'local/all-minilm-l6-v2';

export function readModels(env: EnvReader): ModelSettings {
  return {
    models: {
      ...readProviders(env),
      inputs: readModelInputs(env),
      timeoutSeconds: env.int('MODEL_REQUEST_TIMEOUT_SECONDS', 600, 1, 24 * 3600),
      maxRetries: env.int('MODEL_MAX_RETRIES', 2, 0, 10),
    },
    assistantMaxSteps: env.int('ASSISTANT_MAX_STEPS', 8, 1, 100),
    chatMessageJob: env.jobLimits('CHAT_MESSAGE_TIME_LIMIT_SECONDS', 900, 24 * 3600),
    knowledgeBaseJob: env.jobLimits('KNOWLEDGE_BASE_JOB_TIME_LIMIT_SECONDS', 3600, 7 * 24 * 3600),
    documentExtraction: {
      memoryMb: env.int('EXTRACTION_MEMORY_MB', 1024, 64, 64 * 1024),
      timeSeconds: env.int('EXTRACTION_TIME_LIMIT_SECONDS', 300, 1, 24 * 3600),
      threads: env.int('EXTRACTION_THREADS', 2, 1, 64),
    },
  };
}

/**
 * MODEL_PROVIDERS (`name=baseURL,...`), a key per provider (MODEL_PROVIDER_<NAME>_API_KEY), the OPENAI_API_KEY
 * shortcut (provider `openai` at OPENAI_BASE_URL) and DEFAULT_MODEL (`provider/model`, its provider configured).
 */
function readProviders(env: EnvReader): Pick<ModelsConfig, 'providers' | 'defaultModel' | 'defaultEmbeddingModel'> {
  const keyOf = (name: string) => env.optional(`MODEL_PROVIDER_${name.toUpperCase().replace(/-/g, '_')}_API_KEY`);
  const withKey = (baseUrl: string, apiKey: string | undefined) => ({
    baseUrl: baseUrl.replace(/\/+$/, ''),
    ...(apiKey === undefined ? {} : { apiKey }),
  });
  const providers: ModelsConfig['providers'] = {};
  for (const entry of env.list('MODEL_PROVIDERS')) {
    const eq = entry.indexOf('=');
    const name = eq < 0 ? entry : entry.slice(0, eq).trim();
    const baseUrl = eq < 0 ? '' : entry.slice(eq + 1).trim();
    if (!/^[a-z0-9_-]+$/.test(name) || name === '__proto__' || !baseUrl) {
      env.problem(
        `MODEL_PROVIDERS entries must be name=baseURL with a name of [a-z0-9_-], got ${JSON.stringify(entry)}`,
      );
      continue;
    }
    if (Object.hasOwn(providers, name)) env.problem(`MODEL_PROVIDERS names provider "${name}" twice`);
    if (!env.checkHttpUrl(baseUrl, `MODEL_PROVIDERS entry "${name}"`)) continue;
    providers[name] = withKey(baseUrl, keyOf(name));
  }
  // The local embedding server (src/embeddings), which `npm start` runs and names here for the api and worker.
  const localUrl = env.optional('LOCAL_EMBEDDINGS_URL');
  if (localUrl !== undefined && env.checkHttpUrl(localUrl, 'LOCAL_EMBEDDINGS_URL')) {
    if (Object.hasOwn(providers, LOCAL_PROVIDER))
      env.problem('MODEL_PROVIDERS names provider "local", which LOCAL_EMBEDDINGS_URL sets');
    providers[LOCAL_PROVIDER] = withKey(localUrl, undefined);
  }
  const openaiKey = env.optional('OPENAI_API_KEY');
  if (openaiKey !== undefined) {
    if (!Object.hasOwn(providers, 'openai')) {
      const baseUrl = env.string('OPENAI_BASE_URL', OPENAI_BASE_URL);
      if (env.checkHttpUrl(baseUrl, 'OPENAI_BASE_URL')) providers.openai = withKey(baseUrl, openaiKey);
    } else {
      providers.openai = withKey(providers.openai.baseUrl, providers.openai.apiKey ?? openaiKey);
    }
  }

  const checkModel = (setting: string, example: string): string | undefined => {
    const value = env.optional(setting);
    if (value === undefined) return undefined;
    const slash = value.indexOf('/');
    const provider = value.slice(0, Math.max(slash, 0));
    const configured = Object.keys(providers);
    if (slash <= 0 || slash === value.length - 1) {
      env.problem(`${setting} must be provider/model (e.g. ${example}), got ${JSON.stringify(value)}`);
    } else if (!Object.hasOwn(providers, provider)) {
      env.problem(
        `${setting} names provider "${provider}", which is not configured (configured: ${configured.join(', ') || 'none'}); ` +
          'add it to MODEL_PROVIDERS (e.g. MODEL_PROVIDERS=ollama=http://127.0.0.1:11434/v1) or set OPENAI_API_KEY for openai',
      );
    }
    return value;
  };
  const defaultModel = checkModel('DEFAULT_MODEL', 'openai/gpt-4.1-mini');
  const explicitEmbedding = checkModel('DEFAULT_EMBEDDING_MODEL', 'openai/text-embedding-3-small');
  const defaultEmbeddingModel =
    explicitEmbedding ??
    (openaiKey !== undefined && Object.hasOwn(providers, 'openai') ? 'openai/text-embedding-3-small' : undefined) ??
    (Object.hasOwn(providers, LOCAL_PROVIDER) ? LOCAL_EMBEDDING_DEFAULT : undefined);
  return { providers, defaultModel, ...(defaultEmbeddingModel ? { defaultEmbeddingModel } : {}) };
}
