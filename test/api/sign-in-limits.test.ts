// Sign-in attempts are rate-limited per client address and per account (SIGN_IN_RATE_LIMITS, docs/people.md#rate-
// limits), in PostgreSQL's token buckets like RATE_LIMITS. The stack's api counts none (every test signs in from
// one address): each test starts apis of its own, and gives its attempts an address of their own through the
// X-Forwarded-For header a proxy would add, since the buckets are shared by every api on the database.
import { expect } from 'chai';
import { DEFAULT_SIGN_IN_LIMITS } from '../../src/security/rate-limit-rules';
import { Browser, PASSWORD, personWithPassword } from '../harness/people';
import { configWith, getStack, startApi } from '../harness/stack';

const apiWith = (limits: string) => startApi(getStack().env.client, 0, configWith({ SIGN_IN_RATE_LIMITS: limits }));

/** An address no other test uses (one of 10/8's, at random). */
const octet = () => Math.floor(Math.random() * 256);
const freshAddress = () => `10.${octet()}.${octet()}.${octet()}`;
const from = (address: string) => ({ headers: { 'x-forwarded-for': address } });

describe('sign-in rate limits', function () {
  this.timeout(120_000);

  it('are on by default: 30 attempts per address and 10 per account, every 10 minutes', () => {
    expect(configWith({ SIGN_IN_RATE_LIMITS: '' }).signInLimits).to.deep.equal(DEFAULT_SIGN_IN_LIMITS);
    expect(DEFAULT_SIGN_IN_LIMITS.account).to.deep.equal({ capacity: 10, perSecond: 10 / 600 });
    expect(configWith({ SIGN_IN_RATE_LIMITS: 'off' }).signInLimits).to.equal(undefined);
  });

  it('refuse an account past its attempts with 429 and Retry-After, even with the right password', async () => {
    const api = await apiWith('address=100/h,account=3/h');
    try {
      const person = await personWithPassword();
      const address = from(freshAddress());
      const browser = new Browser(api.baseUrl);
      for (let i = 0; i < 3; i++) {
        const wrong = await browser.signIn(person.email, 'not the password', {}, address);
        expect(wrong.status, `attempt ${i}`).to.equal(401);
        expect(wrong.headers.get('ratelimit-remaining')).to.equal(String(2 - i));
      }
      const refused = await browser.signIn(person.email, PASSWORD, {}, address);
      expect(refused.status).to.equal(429);
      expect(refused.body.type).to.equal('TooManyRequestsError');
      expect(refused.body.errors[0].message).to.match(/^Rate limit of the account's sign-in attempts exceeded/);
      // One attempt back every 20 minutes.
      expect(Number(refused.headers.get('retry-after'))).to.be.within(1190, 1200);
      expect(browser.cookies.size).to.equal(0);
      // The account is counted by its email, whatever the case: the upper-cased one is the same account.
      expect((await browser.signIn(person.email.toUpperCase(), PASSWORD, {}, address)).status).to.equal(429);
      // Another account from the same address is not affected.
      const other = await personWithPassword('other');
      expect((await browser.signIn(other.email, PASSWORD, {}, address)).status).to.equal(201);
    } finally {
      await api.close();
    }
  });

  it('refuse an address past its attempts, whatever accounts it tries, across api processes', async () => {
    const one = await apiWith('address=4/h,account=off');
    const two = await apiWith('address=4/h,account=off');
    try {
      const address = freshAddress();
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) {
        const browser = new Browser((i % 2 ? one : two).baseUrl);
        statuses.push(
          (await browser.signIn(`nobody-${i}-${address}@example.test`, PASSWORD, {}, from(address))).status,
        );
      }
      expect(statuses).to.deep.equal([401, 401, 401, 401, 429, 429]);
      const refused = await new Browser(one.baseUrl).signIn('x@example.test', PASSWORD, {}, from(address));
      expect(refused.body.errors[0].message).to.match(/client address's sign-in attempts/);
      expect(Number(refused.headers.get('retry-after'))).to.be.within(890, 900);
      // What a client puts before the proxy's own entry is not its address: it is still counted as `address`.
      const spoofed = await new Browser(one.baseUrl).signIn(
        'y@example.test',
        PASSWORD,
        {},
        from(`10.9.8.7, ${address}`),
      );
      expect(spoofed.status).to.equal(429);
      // Another address is not affected.
      const elsewhere = await new Browser(one.baseUrl).signIn('z@example.test', PASSWORD, {}, from(freshAddress()));
      expect(elsewhere.status).to.equal(401);
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });
});
