// The configured models (DEFAULT_MODEL, DEFAULT_EMBEDDING_MODEL): list and read. They come from the
// environment, so there is nothing to create, change or delete here (other methods: 405).
import { configuredModels } from '../../services/conversations/model-catalog';
import { notFound } from '../../errors';
import { paginate } from '../../persistence/pagination';
import { route } from '../http/route';
import { defineSchema, pageOf, timestamp, uuid } from '../schemas/registry';

const TAG = 'Models';

const ModelSchema = defineSchema('Model', {
  type: 'object',
  required: ['model_config_id', 'model_name', 'model_type', 'default', 'created_at', 'updated_at'],
  properties: {
    model_config_id: uuid,
    model_name: { type: 'string', description: '`provider/model`, as requests name it.' },
    model_type: { enum: ['chat', 'embedding'] },
    provider: { type: 'string', description: 'The provider (MODEL_PROVIDERS or openai).' },
    capabilities: {
      type: 'array',
      items: { type: 'string' },
      description:
        'What the platform uses it for: chat models `text`, `tools` and `structured_output`, and `image`, `audio` and ' +
        '`video` when MODEL_IMAGE_INPUT, MODEL_AUDIO_INPUT or MODEL_VIDEO_INPUT name them (chat messages with content a ' +
        'model does not take are refused with a 400); embedding models `embedding`.',
    },
    default: { type: 'boolean' },
    active: { type: 'boolean' },
    editable: { type: 'boolean', description: 'Always false: models are configured by the operator.' },
    source: { type: 'string' },
    description: { type: 'string' },
    created_at: timestamp,
    updated_at: timestamp,
  },
});

route({
  operationId: 'ListModels',
  method: 'get',
  path: '/models',
  tag: TAG,
  paged: true,
  query: {
    model_type: { enum: ['chat', 'embedding', 'image_generation', 'rerank', 'unknown'] },
    default: { type: 'boolean' },
  },
  summary:
    'The models the operator configured: DEFAULT_MODEL (chat) and DEFAULT_EMBEDDING_MODEL (embedding). Other `provider/model` names of configured providers may still be used in requests.',
  responses: { 200: { description: 'Models', schema: pageOf('ModelList', 'models', ModelSchema) } },
  handler: async ({ deps, page, query }) => {
    const all = configuredModels(deps.config.models).filter(
      (m) =>
        (query.model_type === undefined || m.model_type === query.model_type) &&
        (query.default === undefined || m.default === query.default),
    );
    const start = (page.page - 1) * page.pageSize;
    return {
      status: 200,
      body: { models: all.slice(start, start + page.pageSize), pagination: paginate(page, all.length) },
    };
  },
});

route({
  operationId: 'GetModel',
  method: 'get',
  path: '/models/{model_config_id}',
  tag: TAG,
  // A string, not a uuid: /models/auth-configs (model auth configs, not served) must be a 404, not a 400.
  params: { model_config_id: { type: 'string', minLength: 1, maxLength: 100 } },
  summary: 'A configured model (404 for any other id, including `auth-configs`).',
  responses: { 200: { description: 'Model', schema: ModelSchema } },
  handler: async ({ deps, params }) => {
    const model = configuredModels(deps.config.models).find((m) => m.model_config_id === params.model_config_id);
    if (!model) throw notFound('Model');
    return { status: 200, body: model };
  },
});
