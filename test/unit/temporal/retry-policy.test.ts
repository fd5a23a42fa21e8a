// The retry decision of runs (src/temporal/retry-policy.ts): defaults, the waits (initial_interval × backoff^(n−1),
// capped), max_attempts (and the hard cap of 10), and which endings `on` retries.
import { expect } from 'chai';
import { completePolicy, nextRetry, type RetryPolicy } from '../../../src/temporal/retry-policy';

const lost = { status: 'ERROR', reason: 'WorkerLost' };
const timedOut = { status: 'ERROR', reason: 'TimeLimitExceeded' };
const failed = { status: 'FAILED' };

function policy(request: Partial<RetryPolicy>): RetryPolicy {
  const completed = completePolicy(request);
  if ('error' in completed) throw new Error(completed.error);
  return completed.policy;
}

describe('retry policy', () => {
  it('fills in defaults: one attempt, WorkerLost, 1 s doubling up to 60 s (or initial_interval if longer)', () => {
    expect(policy({})).to.deep.equal({
      max_attempts: 1,
      initial_interval: 1,
      backoff: 2,
      max_interval: 60,
      on: ['WorkerLost'],
    });
    expect(policy({ initial_interval: 120 }).max_interval).to.equal(120);
    expect(completePolicy({ initial_interval: 10, max_interval: 5 })).to.deep.include({ member: 'max_interval' });
    expect(policy({ on: ['Failed', 'Failed'] }).on, 'duplicates dropped').to.deep.equal(['Failed']);
  });

  it('waits initial_interval × backoff^(n−1), at most max_interval, for max_attempts − 1 retries', () => {
    const p = policy({ max_attempts: 5, initial_interval: 2, backoff: 3, max_interval: 30 });
    expect([1, 2, 3, 4, 5].map((n) => nextRetry(p, n, lost)?.delaySeconds)).to.deep.equal([2, 6, 18, 30, undefined]);
    const capped = policy({ max_attempts: 4, initial_interval: 10, backoff: 5, max_interval: 20 });
    expect([1, 2, 3].map((n) => nextRetry(capped, n, lost)?.delaySeconds)).to.deep.equal([10, 20, 20]);
    expect(nextRetry(policy({ max_attempts: 50 }), 10, lost), 'never past 10 attempts').to.equal(undefined);
    expect(nextRetry(null, 1, lost)).to.equal(undefined);
    expect(nextRetry(policy({}), 1, lost), 'one attempt by default').to.equal(undefined);
  });

  it('retries only the endings named in `on`, never a cancelled, succeeded or otherwise failed one', () => {
    const all = policy({ max_attempts: 3, on: ['WorkerLost', 'TimeLimit', 'Failed'] });
    expect(nextRetry(all, 1, lost)?.reason).to.equal('WorkerLost');
    expect(nextRetry(all, 1, timedOut)?.reason).to.equal('TimeLimit');
    expect(nextRetry(all, 1, failed)?.reason).to.equal('Failed');
    for (const ending of [
      { status: 'CANCELLED' },
      { status: 'SUCCEEDED' },
      { status: 'ERROR', reason: 'LogLimitExceeded' },
    ])
      expect(nextRetry(all, 1, ending), JSON.stringify(ending)).to.equal(undefined);
    const lostOnly = policy({ max_attempts: 3 });
    expect(nextRetry(lostOnly, 1, failed)).to.equal(undefined);
    expect(nextRetry(lostOnly, 1, timedOut)).to.equal(undefined);
  });
});
