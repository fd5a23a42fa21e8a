// Waitpoints (docs/waitpoints.md): what runs wait for (a person's approval of a tool call, or a token its own
// code made), listed, read and completed by a member of the organization, or by the waitpoint's signed callback
// URL without an API key. A run's own credential makes tokens and reads its own run's waitpoints.
import { Waitpoint, WAITPOINT_STATUSES } from '../../persistence/entities/waitpoint';
import { iso } from '../../persistence/scoped';
import type { Caller } from '../../services/caller';
import { atLeast } from '../../services/accounts/roles';
import {
  callbackUrl,
  completeWaitpoint,
  createToken,
  findWaitpoint,
  listWaitpoints,
  MAX_WAIT_SECONDS,
  verifyCallback,
  waitpointAfter,
  type CompletionRequest,
  type TokenRequest,
} from '../../services/waitpoints/waitpoints';
import type { Deps } from '../deps';
import { route } from '../http/route';
import { notFound } from '../../errors';
import { defineSchema, nullableTimestamp, pageOf, str, timestamp, uuid } from '../schemas/registry';

const TAG = 'Waitpoints';

const WaitpointSchema = defineSchema('Waitpoint', {
  type: 'object',
  required: [
    'waitpoint_id',
    'kind',
    'status',
    'run_id',
    'subject',
    'timeout_seconds',
    'expires_at',
    'completion',
    'created_at',
  ],
  properties: {
    waitpoint_id: uuid,
    kind: {
      type: 'string',
      enum: ['tool_approval', 'token'],
      description: "`tool_approval`: an assistant's call of a tool; `token`: made by its run's own code.",
    },
    status: { type: 'string', enum: [...WAITPOINT_STATUSES] },
    run_id: { ...uuid, description: 'The run that waits.' },
    subject: {
      type: 'object',
      description:
        "What waits for what. A tool approval's: the tool, the activity, the function the model called and its " +
        "arguments. A token's: its `description`, when its code gave one.",
      properties: {
        description: { type: 'string' },
        tool_id: uuid,
        tool_name: { type: 'string' },
        activity: { type: 'string' },
        function_name: { type: 'string' },
        tool_call_id: { type: 'string' },
        step: { type: 'integer' },
        arguments: { description: 'The arguments the model gave.' },
      },
    },
    timeout_seconds: { type: 'integer' },
    expires_at: { ...timestamp, description: 'Past it, the waitpoint is TIMED_OUT: the call is refused.' },
    completion: {
      type: ['object', 'null'],
      description: 'How it was completed (or why it was not: TIMED_OUT, CANCELLED); null while WAITING.',
      properties: {
        approved: { type: 'boolean' },
        arguments: { type: 'object' },
        output: { description: "A token's: what its run's code gets back." },
        reason: { type: 'string' },
      },
    },
    completed_by: { type: ['string', 'null'], description: 'User id, API key id, or `callback` (the callback URL).' },
    completed_at: nullableTimestamp,
    created_at: timestamp,
    callback_url: {
      type: 'string',
      description:
        'Members only, while WAITING: POSTing a completion here completes the waitpoint without an API key, until expires_at.',
    },
  },
});

function present(deps: Deps, caller: Caller | undefined, w: Waitpoint) {
  return {
    waitpoint_id: w.waitpoint_id,
    kind: w.kind,
    status: w.status,
    run_id: w.run_id,
    subject: w.subject,
    timeout_seconds: w.timeout_seconds,
    expires_at: iso(w.expires_at),
    completion: w.completion,
    completed_by: w.completed_by,
    completed_at: iso(w.completed_at),
    created_at: iso(w.created_at),
    // The URL completes it: shown to those who may complete it themselves.
    ...(w.status === 'WAITING' && caller && atLeast(caller.role, 'member')
      ? { callback_url: callbackUrl(deps.box, deps.config.publicBaseUrl, w) }
      : {}),
  };
}

const CompletionSchema = defineSchema('CompleteWaitpointRequest', {
  type: 'object',
  required: ['approved'],
  additionalProperties: false,
  properties: {
    approved: {
      type: 'boolean',
      description: 'true runs the call; false refuses it (the model is told, with `reason`).',
    },
    arguments: {
      type: 'object',
      maxProperties: 200,
      description: "Approved only: the arguments the call runs with instead of the model's.",
    },
    output: { description: "A token only: what its run's code gets back (at most MAX_JSON_BODY_BYTES)." },
    reason: { ...str(1, 2000), description: "Why (the model reads a refusal's reason)." },
  },
});

const TokenRequestSchema = defineSchema('CreateWaitpointRequest', {
  type: 'object',
  additionalProperties: false,
  properties: {
    timeout_seconds: {
      type: 'integer',
      minimum: 1,
      maximum: 2_592_000,
      description: 'How long it waits before it is TIMED_OUT (default APPROVAL_TIMEOUT_SECONDS, 86400).',
    },
    idempotency_key: {
      ...str(1, 255),
      description:
        'A repeat with the same key (the code retried, or ran again after a restart) answers the first (200).',
    },
    description: { ...str(1, 2000), description: 'What it waits for, for whoever completes it.' },
  },
});

const params = { waitpoint_id: uuid };

route({
  operationId: 'ListWaitpoints',
  method: 'get',
  path: '/waitpoints',
  tag: TAG,
  paged: true,
  query: {
    status: {
      type: 'array',
      items: { type: 'string', enum: [...WAITPOINT_STATUSES] },
      maxItems: WAITPOINT_STATUSES.length,
      description: 'Only waitpoints in these statuses (`A,B` or repeated); `WAITING` is what waits for someone.',
    },
    run_id: { ...uuid, description: 'Only the waitpoints of this run.' },
  },
  summary: "The organization's waitpoints, newest first.",
  responses: { 200: { description: 'Waitpoints', schema: pageOf('WaitpointList', 'waitpoints', WaitpointSchema) } },
  handler: async ({ deps, caller, page, query }) => {
    const { items, pagination } = await listWaitpoints(deps.ds, caller, page, {
      statuses: query.status as Waitpoint['status'][] | undefined,
      runId: query.run_id as string | undefined,
    });
    return { status: 200, body: { waitpoints: items.map((w) => present(deps, caller, w)), pagination } };
  },
});

route({
  operationId: 'CreateWaitpoint',
  method: 'post',
  path: '/waitpoints',
  tag: TAG,
  runScoped: true,
  summary:
    "A token its run's own code waits on (a run's credential only, GT_CLOUD_API_KEY: 403 otherwise): WAITING until " +
    'someone completes it or it times out; the code reads its completion with GetWaitpoint (`wait_seconds` waits ' +
    'for it). 201; 200 for a repeated `idempotency_key` of the run.',
  body: TokenRequestSchema,
  responses: {
    201: { description: 'Waitpoint', schema: WaitpointSchema },
    200: { description: 'The waitpoint of the same idempotency key', schema: WaitpointSchema },
  },
  handler: async ({ deps, caller, body }) => {
    const { waitpoint, created } = await createToken(
      deps.ds,
      caller,
      (body ?? {}) as TokenRequest,
      deps.config.approvalTimeoutSeconds,
    );
    return { status: created ? 201 : 200, body: present(deps, caller, waitpoint) };
  },
});

route({
  operationId: 'GetWaitpoint',
  method: 'get',
  path: '/waitpoints/{waitpoint_id}',
  tag: TAG,
  params,
  runScoped: true,
  query: {
    wait_seconds: {
      type: 'integer',
      minimum: 0,
      maximum: MAX_WAIT_SECONDS,
      description: `Answer once it no longer waits, or after this many seconds (at most ${MAX_WAIT_SECONDS}): how a token's code waits.`,
    },
  },
  summary:
    "A waitpoint: what waits, for what, until when, and how it was completed. A run's own credential reads its run's only.",
  responses: { 200: { description: 'Waitpoint', schema: WaitpointSchema } },
  handler: async ({ deps, caller, params: p, query }) => {
    const w = await findWaitpoint(deps.ds, caller, p.waitpoint_id);
    const seconds = (query.wait_seconds as number | undefined) ?? 0;
    return { status: 200, body: present(deps, caller, seconds ? await waitpointAfter(deps.ds, w, seconds) : w) };
  },
});

const COMPLETE_SUMMARY =
  "Idempotent: a second completion answers the first's result and changes nothing. 409 when the waitpoint timed " +
  'out or was cancelled, or its run ended. Answers once the run recorded the completion (up to 10 s; then the ' +
  'waitpoint as it is, still WAITING: the run applies it when a worker takes it).';

route({
  operationId: 'CompleteWaitpoint',
  method: 'post',
  path: '/waitpoints/{waitpoint_id}/complete',
  tag: TAG,
  params,
  audit: (b) => ({ approved: (b as CompletionRequest).approved }),
  summary: `Approves (optionally with other arguments) or rejects what the waitpoint waits for. ${COMPLETE_SUMMARY}`,
  body: CompletionSchema,
  bodyRequired: true,
  responses: { 200: { description: 'Waitpoint', schema: WaitpointSchema } },
  handler: async ({ deps, caller, params: p, body }) => {
    const w = await findWaitpoint(deps.ds, caller, p.waitpoint_id);
    const done = await completeWaitpoint(deps, w, caller.actor, body as CompletionRequest);
    return { status: 200, body: present(deps, caller, done) };
  },
});

route({
  operationId: 'CompleteWaitpointByCallback',
  method: 'post',
  path: '/waitpoints/{waitpoint_id}/callback',
  tag: TAG,
  auth: 'none',
  params,
  query: { expires: str(1, 12), signature: str(1, 100) },
  summary:
    `Completes the waitpoint through its \`callback_url\` (signed, expiring with the waitpoint), without an API key: ` +
    `for an outside system (a chat app's button). 403 for a URL not signed here or expired. ${COMPLETE_SUMMARY}`,
  body: CompletionSchema,
  bodyRequired: true,
  responses: { 200: { description: 'Waitpoint', schema: WaitpointSchema } },
  handler: async ({ deps, params: p, query, body }) => {
    verifyCallback(deps.box, p.waitpoint_id, query as { expires?: string; signature?: string });
    const row = await deps.ds.getRepository(Waitpoint).findOneBy({ waitpoint_id: p.waitpoint_id });
    if (!row) throw notFound('Waitpoint');
    const w = await findWaitpoint(deps.ds, { organizationId: row.organization_id }, p.waitpoint_id);
    const done = await completeWaitpoint(deps, w, 'callback', body as CompletionRequest);
    return { status: 200, body: present(deps, undefined, done) };
  },
});
