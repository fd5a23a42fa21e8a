// Typed route bodies (src/api/http/route.ts, src/api/schemas/registry.ts): a route's body, query and params
// types follow from its JSON Schemas, through `$ref`s made by defineSchema, while the schemas themselves stay
// the plain objects ajv compiles and the OpenAPI document prints. The type assertions fail the build; nothing
// here registers a route or a schema (the OpenAPI document must not change).
import { expect } from 'chai';
import { route } from '../../../../src/api/http/route';
import { ref, type SchemaRef, type Static, str, uuid } from '../../../../src/api/schemas/registry';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const holds = <T extends true>(): T => true as T;

const PetSchema = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: { name: str(1, 20), legs: { type: 'integer', minimum: 0, maximum: 8 } },
} as const;
/** What `defineSchema('Pet', PetSchema)` returns, without registering it. */
const Pet = ref<typeof PetSchema>('Pet');
const RequestSchema = {
  type: 'object',
  required: ['pets'],
  additionalProperties: false,
  properties: { pets: { type: 'array', items: Pet }, owner_id: uuid },
} as const;
type Request = SchemaRef<typeof RequestSchema>;
type RequestBody = { pets: { name: string; legs?: number }[]; owner_id?: string };

/** Never called: `route` would register it. Its handler's parameter types are the assertions. */
export const declareForTypes = (body: Request) =>
  route({
    operationId: 'TypedRouteTest',
    method: 'post',
    path: '/typed-route-test/{owner_id}',
    tag: 'Test',
    summary: 'Declared for its types.',
    params: { owner_id: uuid },
    query: { verbose: { type: 'boolean' } },
    body,
    responses: { 204: { description: 'Nothing' } },
    handler: async (req) => {
      const checks: [
        Equal<typeof req.body, RequestBody>,
        Equal<typeof req.query, { verbose?: boolean }>,
        Equal<typeof req.params, { owner_id: string }>,
      ] = [true, true, true];
      void checks;
    },
  });

describe('typed route bodies', () => {
  it('gives a schema its type, through $refs', () => {
    expect(holds<Equal<Static<typeof Pet>, { name: string; legs?: number }>>()).to.equal(true);
    expect(holds<Equal<Static<Request>, RequestBody>>()).to.equal(true);
  });

  it('keeps a $ref the plain object ajv and the OpenAPI document see', () => {
    expect(Pet).to.deep.equal({ $ref: '#/components/schemas/Pet' });
    expect(Object.getOwnPropertySymbols(Pet)).to.deep.equal([]);
    expect(JSON.stringify(RequestSchema)).to.equal(
      JSON.stringify({
        type: 'object',
        required: ['pets'],
        additionalProperties: false,
        properties: {
          pets: { type: 'array', items: { $ref: '#/components/schemas/Pet' } },
          owner_id: uuid,
        },
      }),
    );
  });
});
