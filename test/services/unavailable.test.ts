// Telling an unreachable database from a wrong query (the api answers the first 503).
import { expect } from 'chai';
import { isUnavailable } from '../../src/persistence/unavailable';
import { getStack } from '../support/stack';

const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

describe('database unavailable', () => {
  it('tells connection failures from wrong queries', async () => {
    expect(isUnavailable(refused())).to.equal(true);
    expect(isUnavailable(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }))).to.equal(true);
    expect(isUnavailable(new Error('x', { cause: refused() }))).to.equal(true);
    const wrong = await getStack().ds.query('SELECT * FROM no_such_table').catch((e: unknown) => e);
    expect(isUnavailable(wrong)).to.equal(false);
    // A transaction whose connection the server terminated (the api answered 500 to it during the drill).
    const runner = getStack().ds.createQueryRunner();
    await runner.connect();
    await runner.startTransaction();
    const [{ pid }] = await runner.query('SELECT pg_backend_pid() AS pid');
    await getStack().ds.query('SELECT pg_terminate_backend($1)', [pid]);
    const lost = await runner.query('SELECT 1').catch((e: unknown) => e);
    const commit = await runner.commitTransaction().catch((e: unknown) => e);
    await runner.release();
    expect(isUnavailable(lost), String(lost)).to.equal(true);
    expect(commit).to.have.property('name', 'QueryRunnerAlreadyReleasedError');
    expect(isUnavailable(commit)).to.equal(true);
  });
});
