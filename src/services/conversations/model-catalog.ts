// The models the operator configured, as GET /models shows them: DEFAULT_MODEL (chat) and
// DEFAULT_EMBEDDING_MODEL (embedding). Models come from the environment, not from records: they have a stable
// id derived from their name and type, no creation time (the epoch), and cannot be created or changed through
// the api. Any other `provider/model` of a configured provider can still be named in a request; the api calls
// no model, so it cannot list what a provider offers.
import { createHash } from 'node:crypto';
import type { ModelsConfig } from '../../config/models';
import { MEDIA_KINDS, modelMatches, type ModelInputs } from '../../config/model-inputs';

export type ModelType = 'chat' | 'embedding';

export interface CatalogModel {
  model_config_id: string;
  model_name: string;
  model_type: ModelType;
  provider: string;
  /**
   * What the model is used for here: chat models take text, tool calls and structured output, and the `image`,
   * `audio` and `video` input the operator names them for (MODEL_IMAGE_INPUT, ...); embedding models embed text.
   */
  capabilities: string[];
  default: boolean;
  active: boolean;
  editable: boolean;
  source: 'configuration';
  description: string;
  created_at: string;
  updated_at: string;
}

const CONFIGURED_AT = new Date(0).toISOString();

/** A uuid (v4 layout) from a hash of the model's type and name: the same on every api replica and restart. */
function modelId(type: ModelType, name: string): string {
  const h = createHash('sha256').update(`${type}:${name}`).digest('hex');
  const variant = ((parseInt(h[16], 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

function entry(type: ModelType, name: string, setting: string, inputs: ModelInputs): CatalogModel {
  return {
    model_config_id: modelId(type, name),
    model_name: name,
    model_type: type,
    provider: name.slice(0, name.indexOf('/')),
    capabilities:
      type === 'chat'
        ? ['text', 'tools', 'structured_output', ...MEDIA_KINDS.filter((kind) => modelMatches(inputs[kind], name))]
        : ['embedding'],
    default: true,
    active: true,
    editable: false,
    source: 'configuration',
    description: `Set by ${setting}`,
    created_at: CONFIGURED_AT,
    updated_at: CONFIGURED_AT,
  };
}

/** The configured models, chat first. */
export function configuredModels(models: ModelsConfig): CatalogModel[] {
  return [
    ...(models.defaultModel ? [entry('chat', models.defaultModel, 'DEFAULT_MODEL', models.inputs)] : []),
    ...(models.defaultEmbeddingModel
      ? [entry('embedding', models.defaultEmbeddingModel, 'DEFAULT_EMBEDDING_MODEL', models.inputs)]
      : []),
  ];
}
