// One JSON Schema per request and response shape. The same objects feed ajv (request validation, and
// response validation in tests) and the OpenAPI 3.1 document's components.schemas.
import Ajv, { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

export type JsonSchema = Record<string, unknown>;

const schemas: Record<string, JsonSchema> = {};

/** Registers a named schema; returns a `$ref` to it for use inside other schemas and routes. */
export function defineSchema(name: string, schema: JsonSchema): JsonSchema {
  if (schemas[name] && JSON.stringify(schemas[name]) !== JSON.stringify(schema)) {
    throw new Error(`schema ${name} defined twice with different shapes`);
  }
  schemas[name] = schema;
  return ref(name);
}

export const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });

export function allSchemas(): Record<string, JsonSchema> {
  return schemas;
}

const ROOT_ID = 'tarmac';
let ajv: Ajv | undefined;
const compiled = new Map<string, ValidateFunction>();

function getAjv(): Ajv {
  if (!ajv) {
    // coerceTypes is off: the body must have the right JSON types. Query strings are coerced by hand.
    ajv = new Ajv({ allErrors: true, strict: false, useDefaults: true });
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

// Shared building blocks.
export const uuid: JsonSchema = {
  type: 'string',
  format: 'uuid',
  pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-4[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$',
};
export const timestamp: JsonSchema = { type: 'string', format: 'date-time' };
export const nullableTimestamp: JsonSchema = { type: ['string', 'null'], format: 'date-time' };
export const str = (min: number, max: number): JsonSchema => ({ type: 'string', minLength: min, maxLength: max });

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
      items: { type: 'object', required: ['message'], properties: { message: { type: 'string' }, path: { type: 'string' } } },
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
