// IDEMPOTENCY_TTL: a duration from 1 s to 30 days, 24 h by default.
import { expect } from 'chai';
import { loadConfig } from '../../../src/config';
import { parseDurationSeconds } from '../../../src/config/idempotency';
import { configProblems } from '../../support/config-problems';

const problems = configProblems;

describe('config: idempotency keys', () => {
  it('holds keys for 24 h by default and reads s, m, h, d or bare seconds', () => {
    expect(loadConfig({}).idempotencyTtlSeconds).to.equal(86_400);
    expect(loadConfig({ IDEMPOTENCY_TTL: '90m' }).idempotencyTtlSeconds).to.equal(5_400);
    expect(loadConfig({ IDEMPOTENCY_TTL: '30d' }).idempotencyTtlSeconds).to.equal(30 * 86_400);
    expect(loadConfig({ IDEMPOTENCY_TTL: '2H' }).idempotencyTtlSeconds).to.equal(7_200);
    expect(parseDurationSeconds('45')).to.equal(45);
  });

  it('refuses what is not a duration from 1 s to 30 days', () => {
    for (const bad of ['0s', '31d', '1.5h', '-1h', 'forever', '24 hours']) {
      expect(problems({ IDEMPOTENCY_TTL: bad })[0], bad).to.include('IDEMPOTENCY_TTL');
    }
  });
});
