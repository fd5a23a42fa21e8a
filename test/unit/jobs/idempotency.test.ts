// The request hash of idempotency keys (src/jobs/idempotency.ts): equal requests hash alike whatever the order
// of their members; the header's value is checked.
import { expect } from 'chai';
import { HttpError } from '../../../src/errors';
import { bodyHashOf, canonicalJson, idempotencyKeyOf } from '../../../src/jobs/idempotency';

describe('idempotency keys: request hash and header', () => {
  it('writes objects with their members in name order, at every depth, without undefined members', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { f: null, e: 'x' }], c: undefined } })).to.equal(
      '{"a":{"d":[2,{"e":"x","f":null}]},"b":1}',
    );
    expect(canonicalJson(undefined)).to.equal('null');
    expect(canonicalJson([undefined])).to.equal('[null]');
  });

  it('hashes equal requests alike and different ones apart', () => {
    expect(bodyHashOf({ body: { args: ['a'], env_vars: [] } })).to.equal(
      bodyHashOf({ body: { env_vars: [], args: ['a'] } }),
    );
    expect(bodyHashOf({ body: { args: ['a'] } })).to.not.equal(bodyHashOf({ body: { args: ['b'] } }));
    expect(bodyHashOf({ body: { args: ['a', 'b'] } })).to.not.equal(bodyHashOf({ body: { args: ['b', 'a'] } }));
    expect(bodyHashOf({})).to.match(/^[0-9a-f]{64}$/);
  });

  it('takes 1 to 255 characters; otherwise a 400 naming the header', () => {
    expect(idempotencyKeyOf(undefined)).to.equal(undefined);
    expect(idempotencyKeyOf('k'.repeat(255))).to.have.length(255);
    for (const bad of ['', 'k'.repeat(256)]) {
      const err = (() => {
        try {
          idempotencyKeyOf(bad);
        } catch (e) {
          return e;
        }
      })() as HttpError;
      expect(err).to.be.instanceOf(HttpError);
      expect([err.status, err.errors[0].path]).to.deep.equal([400, '/header/Idempotency-Key']);
    }
  });
});
