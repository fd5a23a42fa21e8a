// The one route builder: every handler is declared with its schemas, and this module does validation,
// authentication and the OpenAPI entry for all of them. Handlers receive validated input typed by the same
// schemas (`Static`, src/api/schemas/registry.ts): a route's body, query and params types follow from them.
import Router from '@koa/router';
import type { ErrorObject } from 'ajv';
import type { Context } from 'koa';
import getRawBody from 'raw-body';
import type { Deps } from '../deps';
import { JsonSchema, Static, validatorFor, withTextRule } from '../schemas/registry';
import type { Caller } from '../../services/caller';
import { authenticate, extractKey } from './auth';
import { authenticateSession, sessionTokenOf } from './session-cookies';
import { auditRequest } from './audit';
import { roleNeeded } from './route-roles';
import { atLeast, roleRefused } from '../../services/accounts/roles';
import { setSpanAttributes } from '../../observability/tracing';
import { badRequest, forbidden, HttpError, payloadTooLarge, validationError } from '../../errors';
import { guardInput } from './input-guard';
import { MAX_PAGE, PageRequest } from '../../persistence/pagination';
import {
  bodyHashOf,
  createIdempotently,
  IDEMPOTENT_REPLAYED_HEADER,
  idempotencyKeyOf,
  type IdempotencyClaim,
  type IdempotentRecord,
} from '../../jobs/idempotency';

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface ResponseSpec {
  description: string;
  schema?: JsonSchema;
  /** Defaults to application/json when a schema is given. */
  contentType?: string;
}

type Schemas = Record<string, JsonSchema>;

/**
 * The input types a route's schemas give its handler. A schema only known as `JsonSchema` (routes seen by the
 * builder itself, whatever their schemas, and `any` or `unknown` while the checker infers them: guarded, as
 * json-schema-to-ts would expand them without end) gives the plain runtime types; a route without a body gets
 * `undefined`, without params `{}`. Query members are optional: validation requires none of them.
 */
type BodyOf<B> = unknown extends B
  ? unknown
  : B extends undefined
    ? undefined
    : string extends keyof B
      ? unknown
      : Static<B>;
type QueryOf<Q> = unknown extends Q
  ? Record<string, unknown>
  : Q extends Schemas
    ? string extends keyof Q
      ? Record<string, unknown>
      : { -readonly [K in keyof Q]?: Static<Q[K]> }
    : Record<never, never>;
type ParamsOf<P> = unknown extends P
  ? Record<string, string>
  : P extends Schemas
    ? string extends keyof P
      ? Record<string, string>
      : { -readonly [K in keyof P]: Static<P[K]> }
    : Record<never, never>;

export interface RouteSpec<
  B extends JsonSchema | undefined = JsonSchema | undefined,
  Q extends Schemas | undefined = Schemas | undefined,
  P extends Schemas | undefined = Schemas | undefined,
> {
  operationId: string;
  method: Method;
  /** OpenAPI-style path under /api, e.g. `/buckets/{bucket_id}/assets/{name}`. */
  path: string;
  summary: string;
  tag: string;
  /**
   * `apiKey` (default): a Bearer key, or a person's session cookie (unsafe methods then need X-CSRF-Token).
   * `apiKeyOrQuery`: also `?api_key=`. `none`: public.
   */
  auth?: 'apiKey' | 'apiKeyOrQuery' | 'none';
  /** A run's own credential may call this route (the handler checks it names that run). Default: 403. */
  runScoped?: boolean;
  /** Schemas of the path parameters; all are required. */
  params?: P;
  /** The last path parameter may contain `/` (asset names). */
  greedyParam?: string;
  /** Schemas of the query parameters (strings are coerced to the schema's type). */
  query?: Q;
  /** Adds `page` and `page_size` to the query and gives the handler a `page`. */
  paged?: boolean;
  /**
   * This list's own `page_size` default and maximum instead of PAGE_SIZE_DEFAULT / PAGE_SIZE_MAX: for lists
   * that existing clients read with one request and no `page_size` (a ruleset's rules, a thread's messages).
   */
  pageSize?: { default: number; max: number };
  /** JSON body schema. With `bodyRequired` false (default), an empty body is validated as `{}`. */
  body?: B;
  bodyRequired?: boolean;
  /** The handler reads the request stream itself (uploads); no JSON parsing. */
  rawBody?: { contentType: string; description: string };
  responses: Record<number, ResponseSpec>;
  /**
   * The route creates work or stores bytes (runs, jobs, deployments, uploads): refused with 503 and
   * Retry-After while a watched filesystem is below its free-space watermark (src/observability/disk-space.ts).
   */
  needsDiskSpace?: boolean;
  /**
   * The route creates a run or job (through insertAndStart): an optional `Idempotency-Key` header makes it do
   * so once per key, organization, operation and target (the path's ids); a repeat answers this, the first
   * request's record as it is now, with `Idempotent-Replayed: true` (src/jobs/idempotency.ts).
   */
  idempotent?: (req: { deps: Deps; caller: Caller; record: IdempotentRecord }) => Promise<RouteResult>;
  /**
   * The route adds to a record (a run's events): an optional `Idempotency-Key` header gives the handler a
   * `claim`, which it makes in its own transaction (claimAddition); a repeat adds nothing, answers as the
   * first did and sets `replayed`.
   */
  idempotentAddition?: boolean;
  /**
   * The route is written to the audit log (src/api/http/audit.ts) with its answer's status, whatever it was:
   * `true`, or a function that picks what of the body to record (never a secret). Default: DELETE routes only.
   */
  audit?: true | ((body: any) => Record<string, unknown>);
  // A method, so that its parameter is checked bivariantly: a route of any schemas is a `RouteSpec` to the
  // builder, which calls it with the validated input its schemas describe.
  handler(req: NoInfer<RouteRequest<BodyOf<B>, QueryOf<Q>, ParamsOf<P>>>): Promise<RouteResult | void>;
}

export interface RouteRequest<TBody, TQuery, TParams> {
  ctx: Context;
  deps: Deps;
  params: TParams;
  query: TQuery;
  body: TBody;
  page: PageRequest;
  /** Present on authenticated routes. */
  caller: Caller;
  /** On `idempotentAddition` routes, when the request carries an Idempotency-Key. */
  claim?: IdempotencyClaim;
}

export interface RouteResult {
  status: number;
  body?: unknown;
  /** This answers a repeat of an Idempotency-Key (`Idempotent-Replayed: true`). */
  replayed?: boolean;
}

/** What a create route answers to a repeated Idempotency-Key (RouteSpec.idempotent). */
export type IdempotentAnswer = NonNullable<RouteSpec['idempotent']>;

const registered: RouteSpec[] = [];

/**
 * Declares a route; collected by the app and the OpenAPI document. Its request schemas get the text rule
 * (what the input guard enforces), and every numeric query parameter must be bounded: it reaches SQL.
 */
export function route<
  const B extends JsonSchema | undefined = undefined,
  const Q extends Schemas | undefined = undefined,
  const P extends Schemas | undefined = undefined,
>(spec: RouteSpec<B, Q, P>): void {
  const ruled = (schemas?: Schemas) =>
    schemas && Object.fromEntries(Object.entries(schemas).map(([name, schema]) => [name, withTextRule(schema)]));
  for (const [name, schema] of Object.entries<JsonSchema>(spec.query ?? {})) {
    if (
      (schema.type === 'integer' || schema.type === 'number') &&
      (schema.minimum === undefined || schema.maximum === undefined)
    ) {
      throw new Error(`${spec.operationId}: query parameter ${name} needs a minimum and a maximum`);
    }
  }
  registered.push({
    ...(spec as unknown as RouteSpec),
    params: ruled(spec.params),
    query: ruled(spec.query),
    body: spec.body && withTextRule(spec.body),
  });
}

export function allRoutes(): readonly RouteSpec[] {
  return registered;
}

/** Query schema of a route, including the pagination members. */
export function querySchemaOf(spec: RouteSpec, configMaxPageSize: number): Schemas {
  const maxPageSize = spec.pageSize?.max ?? configMaxPageSize;
  return {
    ...(spec.paged
      ? {
          page: {
            type: 'integer',
            minimum: 1,
            maximum: MAX_PAGE,
            description: `Page number, from 1 (at most ${MAX_PAGE}).`,
          },
          page_size: {
            type: 'integer',
            minimum: 1,
            maximum: maxPageSize,
            description: `Items per page (at most ${maxPageSize}).`,
          },
        }
      : {}),
    ...(spec.query ?? {}),
  };
}

/** `/a/{b}/c/{d}` → `/a/:b/c/:d` (and `*d` for a greedy parameter). */
export function koaPath(spec: RouteSpec): string {
  return spec.path.replace(/\{(\w+)\}/g, (_, name) => (name === spec.greedyParam ? `*${name}` : `:${name}`));
}

export function mount(router: Router, spec: RouteSpec, deps: Deps): void {
  const querySchema = querySchemaOf(spec, deps.config.pageSizeMax);
  const validateQuery = validatorFor({ type: 'object', properties: querySchema });
  const validateParams = spec.params
    ? validatorFor({ type: 'object', properties: spec.params, required: Object.keys(spec.params) })
    : undefined;
  const validateBody = spec.body ? validatorFor(spec.body) : undefined;

  router[spec.method](koaPath(spec), async (ctx) => {
    const params = { ...(ctx.params as Record<string, string>) };
    guardInput(params, '/path');
    if (validateParams && !validateParams(params)) throw fromAjv(validateParams.errors, 'path');

    const query = coerceQuery(ctx.query as Record<string, string | string[] | undefined>, querySchema);
    guardInput(query, '/query');
    if (!validateQuery(query)) throw fromAjv(validateQuery.errors, 'query');
    const idempotencyKey =
      spec.idempotent || spec.idempotentAddition ? idempotencyKeyOf(headerOf(ctx, 'idempotency-key')) : undefined;

    let caller: Caller | undefined;
    if (spec.auth !== 'none') {
      const key = extractKey(ctx.get('authorization') || undefined, ctx.query.api_key, spec.auth === 'apiKeyOrQuery');
      // A key wins over a cookie, and is never asked for a CSRF token: only a browser sends cookies on its own.
      const sessionToken = key === undefined ? sessionTokenOf(ctx) : undefined;
      caller = sessionToken
        ? await authenticateSession(ctx, deps, sessionToken)
        : await authenticate(deps.ds, key, deps.keyCache);
      setSpanAttributes({ 'tarmac.organization_id': caller.organizationId });
      if (caller.runId && !spec.runScoped)
        throw forbidden(
          "A run's credential can only post and read that run's events, chat, make and read its waitpoints, and query or search knowledge bases and retrievers",
        );
    }

    const audited = (spec.audit ?? spec.method === 'delete') && !caller?.runId;
    const pick = typeof spec.audit === 'function' ? spec.audit : undefined;
    if (caller) {
      const needed = roleNeeded(spec);
      if (!atLeast(caller.role, needed)) {
        // An audited route records the refusal too: who tried to delete a secret is what the log is for.
        const failure = roleRefused(caller.role, needed, spec.operationId);
        if (audited)
          await auditRequest(ctx, deps, { operationId: spec.operationId, pick }, { caller, body: undefined, failure });
        throw failure;
      }
    }

    // Before the body is read: a refused request or upload is not received first.
    if (caller) await deps.rateLimiter?.admit(ctx, caller, spec.needsDiskSpace === true);
    if (spec.needsDiskSpace) await deps.disk?.admit();

    let body: unknown = undefined;
    if (validateBody) {
      body = await readJsonBody(ctx, deps.config.maxJsonBodyBytes);
      if (body === undefined) {
        if (spec.bodyRequired) throw badRequest('A JSON request body is required', '/body');
        body = {};
      }
      guardInput(body, '/body');
      if (!validateBody(body)) throw fromAjv(validateBody.errors, 'body');
    }

    const page: PageRequest = {
      page: (query.page as number | undefined) ?? 1,
      pageSize: (query.page_size as number | undefined) ?? spec.pageSize?.default ?? deps.config.pageSizeDefault,
    };
    const claim: IdempotencyClaim | undefined =
      idempotencyKey !== undefined && caller
        ? {
            organizationId: caller.organizationId,
            operation: spec.operationId,
            target: Object.keys(spec.params ?? {})
              .map((name) => params[name])
              .join('/'),
            key: idempotencyKey,
            bodyHash: bodyHashOf({ body, query: ctx.query }),
            ttlSeconds: deps.config.idempotencyTtlSeconds,
          }
        : undefined;
    const request = { ctx, deps, params, query, body, page, caller: caller as Caller, claim };
    if (!audited) return answer(ctx, spec, request);
    let failure: unknown;
    try {
      await answer(ctx, spec, request);
    } catch (err) {
      failure = err;
      throw err;
    } finally {
      await auditRequest(ctx, deps, { operationId: spec.operationId, pick }, { caller, body, failure });
    }
  });
}

/** Runs the handler (once per Idempotency-Key on `idempotent` routes) and writes its result on the response. */
async function answer(
  ctx: Context,
  spec: RouteSpec,
  request: RouteRequest<unknown, Record<string, unknown>, Record<string, string>>,
): Promise<void> {
  const { deps, claim, caller } = request;
  let result: RouteResult | void;
  if (claim && spec.idempotent) {
    const replay = spec.idempotent;
    const once = await createIdempotently<RouteResult | void>(
      deps.ds,
      claim,
      () => spec.handler(request),
      (record) => replay({ deps, caller, record }),
      deps.temporal,
    );
    result = once.value && once.replayed ? { ...once.value, replayed: true } : once.value;
  } else {
    result = await spec.handler(request);
  }
  if (result) {
    if (result.replayed) ctx.set(IDEMPOTENT_REPLAYED_HEADER, 'true');
    ctx.status = result.status;
    if (result.body !== undefined) ctx.body = result.body;
  }
}

/** A request header's value as sent (`''` when sent empty), undefined when absent. */
function headerOf(ctx: Context, name: string): string | undefined {
  const value = ctx.req.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** Reads and parses a JSON body; undefined when the request has none. */
async function readJsonBody(ctx: Context, limit: number): Promise<unknown> {
  const length = ctx.get('content-length');
  if (!ctx.req.headers['transfer-encoding'] && (length === '' || length === '0')) return undefined;
  const type = ctx.get('content-type');
  if (type) {
    const parsed = type.split(';')[0].trim().toLowerCase();
    if (parsed !== 'application/json' && !parsed.endsWith('+json')) {
      throw new HttpError(415, 'UnsupportedMediaTypeError', [{ message: 'Request bodies must be application/json' }]);
    }
  }
  let text: string;
  try {
    text = await getRawBody(ctx.req, { limit, encoding: 'utf8', length: length || undefined });
  } catch (err) {
    if ((err as { type?: string }).type === 'entity.too.large') throw payloadTooLarge(limit);
    throw badRequest('Could not read the request body', '/body');
  }
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw badRequest('The request body is not valid JSON', '/body');
  }
}

/** Query strings → schema types. Arrays accept both `a=1,2` and `a=1&a=2`. */
export function coerceQuery(raw: Record<string, string | string[] | undefined>, schema: Record<string, JsonSchema>) {
  const out: Record<string, unknown> = {};
  for (const [name, prop] of Object.entries(schema)) {
    const value = raw[name];
    if (value === undefined) continue;
    const type = prop.type;
    if (type === 'array') {
      out[name] = (Array.isArray(value) ? value : [value]).flatMap((v) => v.split(',')).filter((v) => v !== '');
      continue;
    }
    const single = Array.isArray(value) ? value[value.length - 1] : value;
    // Plain decimal notation only (no `0x10`, `1e3`, `Infinity`, spaces): anything else stays a string and fails validation.
    if (type === 'integer' || type === 'number') out[name] = /^-?\d+(\.\d+)?$/.test(single) ? Number(single) : single;
    else if (type === 'boolean') out[name] = single === 'true' ? true : single === 'false' ? false : single;
    else out[name] = single;
  }
  return out;
}

function explain(e: ErrorObject, path: string): string {
  if (e.keyword === 'required') return 'is required';
  if (e.keyword === 'pattern' && /uuid|_id$/.test(path)) return 'must be a UUID';
  // A pattern or enum is explained by its schema's description when it has one (asset names, knowledge base types).
  if ((e.keyword === 'pattern' || e.keyword === 'enum') && typeof e.parentSchema?.description === 'string')
    return `must be ${e.parentSchema.description}`;
  if (e.keyword === 'discriminator')
    return `is ${JSON.stringify((e.params as { tagValue: unknown }).tagValue)}; it must be one of ${tagValues(e).join(', ')}`;
  return e.message ?? 'is invalid';
}

/** The values a discriminator's branches accept for its tag. */
function tagValues(e: ErrorObject): string[] {
  const tag = (e.params as { tag: string }).tag;
  const branches =
    (e.parentSchema as { oneOf?: Array<{ properties?: Record<string, { const?: string }> }> })?.oneOf ?? [];
  return branches.map((b) => b.properties?.[tag]?.const).filter((v): v is string => typeof v === 'string');
}

function fromAjv(errors: ErrorObject[] | null | undefined, where: 'path' | 'query' | 'body'): HttpError {
  const list = (errors ?? []).map((e) => {
    // A discriminator's error is about its tag member (`/content/1/type`), not the whole object.
    const member =
      e.keyword === 'required'
        ? `/${(e.params as { missingProperty: string }).missingProperty}`
        : e.keyword === 'discriminator'
          ? `/${(e.params as { tag: string }).tag}`
          : '';
    const path = `/${where}${e.instancePath}${member}`;
    return { message: `${path} ${explain(e, path)}`, path };
  });
  // One message per path: a uuid failing both `pattern` and `format` reads as one problem.
  const firstPerPath = list.filter((e, i) => list.findIndex((o) => o.path === e.path) === i);
  return validationError(firstPerPath.length ? firstPerPath : [{ message: `invalid ${where}` }]);
}
