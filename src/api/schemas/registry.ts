// One JSON Schema per request and response shape. The same objects feed ajv (request validation, and
// response validation in tests) and the OpenAPI 3.1 document's components.schemas.
import Ajv, { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import { ROLES } from '../../persistence/entities/user';

export type JsonSchema = Record<string, unknown>;

const schemas: Record<string, JsonSchema> = {};

/** Registers a named schema (with the text rule, see `withTextRule`); returns a `$ref` to it for use inside other schemas and routes. */
export function defineSchema<const S extends JsonSchema>(name: string, schema: S): SchemaRef<S> {
  const ruled = withTextRule(schema);
  if (schemas[name] && JSON.stringify(schemas[name]) !== JSON.stringify(ruled)) {
    throw new Error(`schema ${name} defined twice with different shapes`);
  }
  schemas[name] = ruled;
  return ref<S>(name);
}

export const ref = <S extends JsonSchema = AnyValue>(name: string): SchemaRef<S> => ({
  $ref: `#/components/schemas/${name}`,
});

// ---- Static types of schemas ----
// A schema written as a literal (or `as const`) has a TypeScript type: `Static<typeof schema>`, through
// json-schema-to-ts. A `$ref` made by `defineSchema` remembers the schema it names in a member that exists
// for the type checker only, so types follow references while the objects (what ajv and the OpenAPI
// document see) stay plain `{ $ref }`. The text rule is not in these types: it only narrows strings.

declare const named: unique symbol;
/** `{ $ref }` to a registered schema; `S` is that schema, for `Static` only. */
export type SchemaRef<S extends JsonSchema> = { $ref: string; readonly [named]?: S };
/** The schema that allows any JSON value. */
type AnyValue = Record<never, never>;

/** `T` with every `SchemaRef` replaced by the schema it names. */
type Deref<T> = T extends { $ref: string; readonly [named]?: infer S }
  ? Deref<S>
  : T extends object
    ? { [K in keyof T]: Deref<T[K]> }
    : T;

/** The type of the values a schema accepts (after ajv, so with its defaults filled in). */
export type Static<S> = Deref<S> extends infer D extends JSONSchema ? FromSchema<D> : unknown;

export function allSchemas(): Record<string, JsonSchema> {
  return schemas;
}

const ROOT_ID = 'tarmac';
let ajv: Ajv | undefined;
const compiled = new Map<string, ValidateFunction>();

function getAjv(): Ajv {
  if (!ajv) {
    // coerceTypes is off: the body must have the right JSON types. Query strings are coerced by hand.
    // verbose: errors carry their schema, so a failed `pattern` can be explained by its description.
    // discriminator: a `oneOf` chosen by a tag member (chat messages by `role`) reports errors of that branch only.
    ajv = new Ajv({ allErrors: true, strict: false, useDefaults: true, verbose: true, discriminator: true });
    addFormats(ajv);
    ajv.addSchema({ $id: ROOT_ID, components: { schemas } });
  }
  return ajv;
}

/** Compiles (once) a validator for a schema that may `$ref` the registry. */
export function validatorFor(schema: JsonSchema): ValidateFunction {
  const key = JSON.stringify(schema);
  let fn = compiled.get(key);
  if (!fn) {
    const rewritten = JSON.parse(key.replace(/"#\/components\/schemas\//g, `"${ROOT_ID}#/components/schemas/`));
    fn = getAjv().compile(rewritten);
    compiled.set(key, fn);
  }
  return fn;
}

// ---- The text rule: what PostgreSQL can store ----
// PostgreSQL's text and jsonb hold no NUL character, and jsonb no unpaired UTF-16 surrogate (text would
// silently get U+FFFD). The input guard (src/api/http/input-guard.ts) refuses both anywhere in a request
// before validation; `withTextRule` makes every schema say so, so the document promises nothing the server
// refuses. It is said as `not: NUL_TEXT` rather than a `pattern` on every string, which schema-driven
// generators (schemathesis) draw from far more slowly. Unpaired surrogates are not in the schemas: the
// regex engines of some clients cannot express them (their strings cannot hold them either); the
// descriptions and docs/api-conventions.md say it.

/** Deepest nesting of arrays and objects in a request body (the input guard refuses deeper ones). */
export const MAX_JSON_DEPTH = 64;
/** A string with a NUL character: what no string or member name may be (`not: NUL_TEXT`). */
export const NUL_TEXT: JsonSchema = { type: 'string', pattern: '\\u0000' };
const TEXT_RULE = `No NUL character and no unpaired surrogate in any string or member name; at most ${MAX_JSON_DEPTH} levels of nesting.`;

/** Any JSON value that obeys the text rule: where a schema leaves a value open (metadata, payloads, unknown members). */
export const JsonValue = ref('JsonValue');
schemas.JsonValue = {
  description: `Any JSON value. ${TEXT_RULE}`,
  not: NUL_TEXT,
  propertyNames: { not: NUL_TEXT },
  items: JsonValue,
  additionalProperties: JsonValue,
};

const ANNOTATIONS = new Set(['description', 'title', 'default', 'examples', 'deprecated', 'readOnly', 'writeOnly']);
// Not `if` and `not`: they are conditions on a value, not schemas of one.
const SUBSCHEMA = ['additionalProperties', 'then', 'else', 'contains', 'items'];
const SUBSCHEMA_LISTS = ['anyOf', 'oneOf', 'allOf', 'prefixItems'];

/**
 * `schema` with the text rule made explicit: strings without pattern, format or enum get `not: NUL_TEXT`;
 * objects get it for member names, and `JsonValue` for members they leave open; arrays without `items` and
 * schemas that allow any value get `JsonValue`. Idempotent.
 */
export function withTextRule(schema: JsonSchema): JsonSchema {
  if (typeof schema !== 'object' || schema === null || '$ref' in schema) return schema;
  // Any value (`{}`, or only a description): JsonValue's keywords, the schema's own annotations kept.
  if (Object.keys(schema).every((k) => ANNOTATIONS.has(k))) return { ...schemas.JsonValue, ...schema };
  const out: JsonSchema = { ...schema };
  const types = ([] as unknown[]).concat(schema.type ?? []);
  if (types.includes('string') && !['pattern', 'format', 'enum', 'const', 'not'].some((k) => k in out))
    out.not = NUL_TEXT;
  if (types.includes('object') || 'properties' in out) {
    out.propertyNames ??= { not: NUL_TEXT };
    if (out.additionalProperties === undefined || out.additionalProperties === true)
      out.additionalProperties = JsonValue;
  }
  if (types.includes('array') && out.items === undefined && out.prefixItems === undefined) out.items = JsonValue;
  if (out.properties)
    out.properties = Object.fromEntries(
      Object.entries(out.properties as Record<string, JsonSchema>).map(([k, v]) => [k, withTextRule(v)]),
    );
  for (const k of SUBSCHEMA) if (out[k] && typeof out[k] === 'object') out[k] = withTextRule(out[k] as JsonSchema);
  for (const k of SUBSCHEMA_LISTS) if (Array.isArray(out[k])) out[k] = (out[k] as JsonSchema[]).map(withTextRule);
  return out;
}

// Shared building blocks.
// `as const`: their types are what `Static` reads.
export const uuid = {
  type: 'string',
  format: 'uuid',
  pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-4[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$',
} as const;
export const timestamp = { type: 'string', format: 'date-time' } as const;
export const nullableTimestamp = { type: ['string', 'null'], format: 'date-time' } as const;
/** A membership's role, least first (docs/people.md#roles). */
export const roleSchema = { type: 'string', enum: ROLES } as const;
export const str = (min: number, max: number) => ({ type: 'string', minLength: min, maxLength: max }) as const;

export const Pagination = defineSchema('Pagination', {
  type: 'object',
  required: ['page_number', 'page_size', 'total_count', 'total_pages'],
  properties: {
    page_number: { type: 'number' },
    page_size: { type: 'number' },
    total_count: { type: 'number' },
    total_pages: { type: 'number' },
    next_page: { type: 'number' },
    previous_page: { type: 'number' },
  },
});

export const ErrorBody = defineSchema('Error', {
  type: 'object',
  required: ['type', 'errors'],
  properties: {
    type: { type: 'string' },
    errors: {
      type: 'array',
      items: {
        type: 'object',
        required: ['message'],
        properties: { message: { type: 'string' }, path: { type: 'string' } },
      },
    },
  },
});

/** `{ <plural>: Item[], pagination }` for page-numbered lists. */
export function pageOf(name: string, plural: string, item: JsonSchema, extra: Record<string, JsonSchema> = {}) {
  return defineSchema(name, {
    type: 'object',
    required: [plural, 'pagination'],
    properties: { [plural]: { type: 'array', items: item }, pagination: Pagination, ...extra },
  });
}
