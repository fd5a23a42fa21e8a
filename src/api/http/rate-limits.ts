// The api's rate limits (docs/run-control.md#rate-limits): before a route's handler runs, its caller takes a
// token from each of its buckets (src/security/rate-limit-rules.ts) in one round trip to PostgreSQL
// (take_rate_tokens, migrations/1765000000000-rate-limits.ts). Every answer of a limited route says where
// the caller stands (RateLimit-Limit, -Remaining, -Reset of its tightest bucket); a refusal is 429 with
// Retry-After, and spends no token of any bucket. Sign-in attempts take buckets of their own through the same
// function (src/api/routes/sessions.ts).
import type { Context } from 'koa';
import type { DataSource } from 'typeorm';
import { HttpError } from '../../errors';
import type { Caller } from '../../services/caller';
import { rateLimitRefusals } from '../../observability/metrics';
import type { BucketRule, RateBucket, RateLimitRules } from '../../security/rate-limit-rules';

interface Taken {
  bucket: NamedBucket;
  rule: BucketRule;
  remaining: number;
}

/** A bucket a request takes a token from: its row in PostgreSQL, its rule, and how a refusal names it. */
export interface NamedBucket {
  /** The metric's label (tarmac_rate_limit_refusals_total{bucket}). */
  bucket: string;
  /** The bucket's row: `<bucket>:<whose>`. */
  name: string;
  rule: BucketRule;
  /** What the 429's message calls it ("API key", "client address's sign-in attempts"). */
  description: string;
}

export class RateLimiter {
  constructor(
    private readonly ds: DataSource,
    private readonly rules: RateLimitRules,
  ) {}

  /** The buckets a request draws on: a run's credential only its own; a key its own, its organization's, and create. */
  bucketsOf(caller: Caller, createsWork: boolean): NamedBucket[] {
    const wanted: Array<[RateBucket, string]> = caller.runId
      ? [['run', caller.runId]]
      : [
          ['key', caller.apiKeyId],
          ['organization', caller.organizationId],
          ...(createsWork ? ([['create', caller.apiKeyId]] as Array<[RateBucket, string]>) : []),
        ];
    return wanted.flatMap(([bucket, id]) => {
      const rule = this.rules[bucket];
      return rule ? [{ bucket, name: `${bucket}:${id}`, rule, description: describe(bucket) }] : [];
    });
  }

  /** Takes the request's tokens and sets the RateLimit headers; throws 429 (Retry-After) when a bucket is empty. */
  admit(ctx: Context, caller: Caller, createsWork: boolean): Promise<void> {
    return takeTokens(this.ds, ctx, this.bucketsOf(caller, createsWork));
  }
}

/**
 * Takes one token from each bucket, or none when one of them is empty (one round trip); sets the RateLimit
 * headers of the tightest and throws 429 with Retry-After on a refusal. Sign-in attempts use it too.
 */
export async function takeTokens(ds: DataSource, ctx: Context, buckets: NamedBucket[]): Promise<void> {
  if (!buckets.length) return;
  const rows: Array<{ name: string; allowed: boolean; remaining: number }> = await ds.query(
    `SELECT name, allowed, remaining FROM take_rate_tokens($1::text[], $2::float8[], $3::float8[])`,
    [buckets.map((b) => b.name), buckets.map((b) => b.rule.capacity), buckets.map((b) => b.rule.perSecond)],
  );
  const taken: Taken[] = buckets.map((b) => ({
    bucket: b,
    rule: b.rule,
    remaining: rows.find((r) => r.name === b.name)!.remaining,
  }));
  const allowed = rows.every((r) => r.allowed);
  // The tightest bucket: when refused, the one that needs the longest to hold a token again.
  const wait = (t: Taken) => Math.max(0, (1 - t.remaining) / t.rule.perSecond);
  const tightest = allowed
    ? taken.reduce((a, b) => (b.remaining / b.rule.capacity < a.remaining / a.rule.capacity ? b : a))
    : taken.reduce((a, b) => (wait(b) > wait(a) ? b : a));
  ctx.set('RateLimit-Limit', String(tightest.rule.capacity));
  ctx.set('RateLimit-Remaining', String(Math.max(0, Math.floor(tightest.remaining))));
  // Seconds until the bucket is full again.
  ctx.set(
    'RateLimit-Reset',
    String(Math.ceil(Math.max(0, tightest.rule.capacity - tightest.remaining) / tightest.rule.perSecond)),
  );
  if (!allowed) {
    rateLimitRefusals.inc({ bucket: tightest.bucket.bucket });
    const retryAfter = Math.max(1, Math.ceil(wait(tightest)));
    throw new HttpError(
      429,
      'TooManyRequestsError',
      [
        {
          message:
            `Rate limit of the ${tightest.bucket.description} exceeded (${tightest.rule.capacity} requests, ` +
            `refilled at ${+tightest.rule.perSecond.toFixed(3)} per second); retry in ${retryAfter} s`,
        },
      ],
      retryAfter,
    );
  }
}

function describe(bucket: RateBucket): string {
  switch (bucket) {
    case 'key':
      return 'API key';
    case 'organization':
      return 'organization';
    case 'create':
      return "API key's requests that create work";
    case 'run':
      return "run's credential";
  }
}
