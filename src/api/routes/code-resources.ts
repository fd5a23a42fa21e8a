// Structures, functions and tools: CRUD with the same shape for the three kinds (the config file member
// is named after the kind). Creating one, or sending `code` or its config file in a PATCH, starts a
// deployment; latest_deployment_id names the newest one.
import type { CodeResource, CodeResourceKind } from '../../persistence/entities/code-resource';
import { iso } from '../../persistence/scoped';
import {
  CodeResourceFields,
  createCodeResource,
  deleteCodeResource,
  findCodeResource,
  KIND_LABEL,
  listCodeResources,
  updateCodeResource,
} from '../../services/code/code-resources';
import { neutralMember, withProviderWords } from '../../services/provider-words';
import { assetName } from './buckets';
import { route } from '../http/route';
import { RESERVED_MCP_HEADERS } from '../../drivers/mcp/headers';
import { retryPolicyAnswer, retryPolicyMember } from './run-retries';
import { defineSchema, JsonSchema, pageOf, str, timestamp, uuid } from '../schemas/registry';
import { ConcurrencySchema, normalizedConcurrency } from './run-queues';

/** Linux refuses one environment string longer than this (MAX_ARG_STRLEN); runs pass env vars to execve. */
const MAX_ENV_VALUE = 131_071;
const MAX_ENV_VARS = 500;
/** Names as code hosts allow them; anything else could not name a repository. */
const repoName = { ...str(1, 200), pattern: '^[A-Za-z0-9_.][A-Za-z0-9_.-]*$' } as const;

const codehostLocation = {
  type: 'object',
  required: ['owner', 'name', 'push'],
  additionalProperties: false,
  properties: {
    owner: repoName,
    name: repoName,
    push: {
      type: 'object',
      required: ['branch'],
      additionalProperties: false,
      properties: { branch: str(1, 200), tag: str(1, 200) },
    },
    connection_id: {
      ...uuid,
      description:
        'A connection of the organization (POST /connections): its access token clones the repository (a private one). ' +
        '409 when the organization has no such connection; the connection cannot be deleted while named here.',
    },
  },
} as const;
const mcpLocation = {
  type: 'object',
  required: ['url'],
  additionalProperties: false,
  description:
    'Tools only: a remote MCP server (Streamable HTTP) whose tools the tool offers; each is an activity of the tool. ' +
    'Deploying the tool connects and lists them (through the outbound address policy, OUTBOUND_ALLOW); see docs/mcp.md.',
  properties: {
    url: {
      type: 'string',
      maxLength: 2000,
      pattern: '^https?://[^\\s]+$',
      description: 'The http(s) URL of its MCP endpoint.',
    },
    headers: {
      type: 'array',
      maxItems: 50,
      description: `Sent with every request to the server (e.g. Authorization). Not: ${RESERVED_MCP_HEADERS.join(', ')}.`,
      items: {
        type: 'object',
        required: ['name', 'value'],
        additionalProperties: false,
        properties: {
          name: { type: 'string', pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$", maxLength: 200 },
          value: {
            type: 'string',
            maxLength: 8192,
            pattern: '^[^\\r\\n\\u0000]*$',
            description:
              'The value, or for `secret_ref` the id of a secret of the organization (409 when it names none).',
          },
          source: { type: 'string', enum: ['manual', 'secret_ref', 'MANUAL', 'SECRET_REF'] },
        },
        if: { required: ['source'], properties: { source: { enum: ['secret_ref', 'SECRET_REF'] } } },
        then: { properties: { value: uuid } },
      },
    },
  },
} as const;
const locations = {
  mcp: mcpLocation,
  codehost: codehostLocation,
  data_lake: {
    type: 'object',
    required: ['bucket_id', 'asset_path'],
    additionalProperties: false,
    properties: { bucket_id: uuid, asset_path: assetName },
  },
  default: { type: 'object', maxProperties: 0 },
} as const;
const github = (use: string) => ({
  ...codehostLocation,
  description: `The provider's word for \`codehost\` (griptape-cloud-client): ${use}.`,
});

export const CodeLocationSchema = defineSchema('CodeLocation', {
  type: 'object',
  description:
    'Exactly one member. `default`: a built-in python3 project (also used when a resource is created without `code`). ' +
    '`data_lake`: an asset of a bucket of the organization; `.zip`, `.tar.gz`, `.tgz` and `.tar` are unpacked, any other file is deployed as a single file. ' +
    '`codehost`: the git repository CODEHOST_BASE_URL/<owner>/<name>.git at the head of `push.branch`, or at `push.tag` when given. ' +
    '`mcp` (tools only): a remote MCP server; a tool cannot change between `mcp` and a code location.',
  minProperties: 1,
  maxProperties: 1,
  additionalProperties: false,
  properties: { ...locations, github: github('accepted and stored as `codehost`') },
});

/**
 * As answered: the stored member; a `codehost` one also as `github`, and an `mcp` one with `default: {}` beside it:
 * the generated client knows only github, data_lake and default, and needs one of them to parse the tool.
 */
const CodeLocationAnswer = defineSchema('CodeLocationAnswer', {
  type: 'object',
  description:
    'The stored member. Beside it, for the generated client: `github` (same value) for `codehost`, `default: {}` for `mcp`.',
  minProperties: 1,
  additionalProperties: false,
  properties: { ...locations, github: github('the same value as `codehost`, beside it') },
});

export const EnvVarSchema = defineSchema('EnvVar', {
  type: 'object',
  required: ['name', 'value'],
  properties: {
    name: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$', maxLength: 200 },
    value: {
      type: 'string',
      maxLength: MAX_ENV_VALUE,
      description: 'The value, or for `secret_ref` the id of a secret of the organization (409 when it names none).',
    },
    source: {
      type: 'string',
      enum: ['manual', 'secret_ref', 'MANUAL', 'SECRET_REF'],
      description: 'Default `manual`; stored and answered lowercase.',
    },
  },
  if: { required: ['source'], properties: { source: { enum: ['secret_ref', 'SECRET_REF'] } } },
  then: { properties: { value: uuid } },
});

/** Tools only: whether an assistant's call waits for a person's approval, and for how long (docs/waitpoints.md). */
const APPROVAL_MEMBERS = {
  requires_approval: {
    type: 'boolean',
    description:
      "Default false. When true, an assistant run that calls one of the tool's activities waits (RUNNING, " +
      '`status_detail.reason` WaitingForApproval) until a person approves or rejects the call (`/waitpoints`).',
  },
  approval_timeout_seconds: {
    type: ['integer', 'null'],
    minimum: 1,
    maximum: 2_592_000,
    description:
      'How long such a call waits for its approval; past it the call is refused (default APPROVAL_TIMEOUT_SECONDS, 86400).',
  },
  approval_webhook: {
    type: ['object', 'null'],
    required: ['url', 'secret_id'],
    additionalProperties: false,
    description:
      'Each call waiting for approval is POSTed here (through the outbound address policy) with the waitpoint and its ' +
      '`callback_url`, signed with the value of the secret `secret_id` (X-Tarmac-Signature, docs/waitpoints.md#notifications).',
    properties: {
      url: { type: 'string', maxLength: 2000, pattern: '^https?://[^\\s]+$' },
      secret_id: { ...uuid, description: 'A secret of the organization (409 when it names none).' },
    },
  },
} as const;

interface KindSpec {
  kind: CodeResourceKind;
  plural: string;
  path: string;
  configMember: string;
  /** Structures only: webhooks. */
  webhook: boolean;
}

const KINDS: KindSpec[] = [
  {
    kind: 'structure',
    plural: 'structures',
    path: '/structures',
    configMember: 'structure_config_file',
    webhook: true,
  },
  { kind: 'function', plural: 'functions', path: '/functions', configMember: 'function_config_file', webhook: false },
  { kind: 'tool', plural: 'tools', path: '/tools', configMember: 'tool_config_file', webhook: false },
];

/** The record as answered by the CRUD routes of its kind. */
export function presentCodeResource(r: CodeResource) {
  return present(
    KINDS.find((k) => k.kind === r.kind)!,
    r,
  );
}

const codeAnswer = (code: CodeResource['code']) =>
  'mcp' in code ? { mcp: code.mcp, default: {} } : withProviderWords(code as Record<string, unknown>);

function present(k: KindSpec, r: CodeResource) {
  return {
    [`${k.kind}_id`]: r.resource_id,
    name: r.name,
    description: r.description,
    code: codeAnswer(r.code),
    env_vars: r.env_vars,
    ...(r.config_file !== null ? { [k.configMember]: r.config_file } : {}),
    latest_deployment_id: r.latest_deployment_id,
    ...(k.webhook ? { webhook_enabled: r.webhook_enabled } : {}),
    concurrency: r.concurrency,
    ...(r.retry_policy ? { retry_policy: r.retry_policy } : {}),
    ...(k.kind === 'tool'
      ? {
          requires_approval: r.requires_approval,
          ...(r.approval_timeout_seconds !== null ? { approval_timeout_seconds: r.approval_timeout_seconds } : {}),
          ...(r.approval_webhook ? { approval_webhook: r.approval_webhook } : {}),
        }
      : {}),
    organization_id: r.organization_id,
    created_by: r.created_by,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

function declare(k: KindSpec): void {
  const Label = KIND_LABEL[k.kind];
  const idParam = `${k.kind}_id`;
  const tag = `${Label}s`;
  const defaultConfig = `${k.kind}_config.yaml`;
  const Schema = defineSchema(Label, {
    type: 'object',
    required: [
      idParam,
      'name',
      'description',
      'code',
      'env_vars',
      'latest_deployment_id',
      'organization_id',
      'created_by',
      'created_at',
      'updated_at',
      ...(k.webhook ? ['webhook_enabled'] : []),
      ...(k.kind === 'tool' ? ['requires_approval'] : []),
    ],
    properties: {
      [idParam]: uuid,
      name: { type: 'string' },
      description: { type: 'string' },
      code: CodeLocationAnswer,
      env_vars: { type: 'array', items: EnvVarSchema },
      [k.configMember]: { type: 'string' },
      latest_deployment_id: { ...uuid, description: 'The newest deployment (runs use the newest SUCCEEDED one).' },
      ...(k.webhook ? { webhook_enabled: { type: 'boolean' } } : {}),
      concurrency: ConcurrencySchema,
      retry_policy: retryPolicyAnswer,
      ...(k.kind === 'tool' ? APPROVAL_MEMBERS : {}),
      organization_id: uuid,
      created_by: { type: 'string' },
      created_at: timestamp,
      updated_at: timestamp,
    },
  });
  const members: Record<string, JsonSchema> = {
    name: str(1, 200),
    description: str(1, 200),
    code: CodeLocationSchema,
    env_vars: { type: 'array', items: EnvVarSchema, maxItems: MAX_ENV_VARS },
    [k.configMember]: {
      ...str(1, 200),
      description: `Path of the config file from the source root (default \`${defaultConfig}\`; ignored for \`default\` code).`,
    },
    ...(k.webhook ? { webhook_enabled: { type: 'boolean' } } : {}),
    concurrency: ConcurrencySchema,
    retry_policy: retryPolicyMember,
    ...(k.kind === 'tool' ? APPROVAL_MEMBERS : {}),
  };
  const fieldsOf = (body: Record<string, unknown>): CodeResourceFields => ({
    ...body,
    concurrency: normalizedConcurrency(body.concurrency as CodeResourceFields['concurrency']),
    code: neutralMember(body.code as CodeResourceFields['code']),
    config_file: body[k.configMember] as string | undefined,
  });
  const params = { [idParam]: uuid };

  route({
    operationId: `List${Label}s`,
    method: 'get',
    path: k.path,
    tag,
    paged: true,
    summary: `The organization's ${k.plural}, newest first.`,
    responses: { 200: { description: `${Label}s`, schema: pageOf(`${Label}List`, k.plural, Schema) } },
    handler: async ({ deps, caller, page }) => {
      const { items, pagination } = await listCodeResources(deps.ds, caller, k.kind, page);
      return { status: 200, body: { [k.plural]: items.map((r) => present(k, r)), pagination } };
    },
  });

  route({
    operationId: `Create${Label}`,
    needsDiskSpace: true,
    method: 'post',
    path: k.path,
    tag,
    summary: `Creates a ${k.kind} and starts its first deployment (of the \`default\` project when \`code\` is absent). \`description\` defaults to "".`,
    body: defineSchema(`Create${Label}Request`, { type: 'object', required: ['name'], properties: members }),
    bodyRequired: true,
    responses: { 201: { description: Label, schema: Schema } },
    handler: async ({ deps, caller, body }) => ({
      status: 201,
      body: present(
        k,
        await createCodeResource(deps, caller, k.kind, fieldsOf(body) as CodeResourceFields & { name: string }),
      ),
    }),
  });

  route({
    operationId: `Get${Label}`,
    method: 'get',
    path: `${k.path}/{${idParam}}`,
    tag,
    params,
    summary: `A ${k.kind}.`,
    responses: { 200: { description: Label, schema: Schema } },
    handler: async ({ deps, caller, params: p }) => ({
      status: 200,
      body: present(k, await findCodeResource(deps.ds, caller, k.kind, p[idParam])),
    }),
  });

  route({
    operationId: `Update${Label}`,
    method: 'patch',
    path: `${k.path}/{${idParam}}`,
    tag,
    params,
    summary: `Changes the given members. Sending \`code\` or \`${k.configMember}\` (even unchanged) starts a new deployment.`,
    body: defineSchema(`Update${Label}Request`, { type: 'object', properties: members }),
    responses: { 200: { description: Label, schema: Schema } },
    handler: async ({ deps, caller, params: p, body }) => {
      const resource = await findCodeResource(deps.ds, caller, k.kind, p[idParam]);
      return { status: 200, body: present(k, await updateCodeResource(deps, caller, resource, fieldsOf(body))) };
    },
  });

  route({
    operationId: `Delete${Label}`,
    method: 'delete',
    path: `${k.path}/{${idParam}}`,
    tag,
    params,
    summary:
      `Deletes a ${k.kind} with its deployments${k.kind === 'structure' ? ' and runs' : ''}. Its open runs are cancelled first (their processes stop; bounded wait).` +
      (k.kind === 'function' ? '' : ' Assistants that name it no longer do.'),
    responses: { 204: { description: 'Deleted' } },
    handler: async ({ deps, caller, params: p }) => {
      await deleteCodeResource(deps, caller, await findCodeResource(deps.ds, caller, k.kind, p[idParam]));
      return { status: 204 };
    },
  });
}

for (const k of KINDS) declare(k);
