// The rules of the api's rate limits (RATE_LIMITS; the limiter is src/api/http/rate-limits.ts, the buckets live
// in PostgreSQL). Token buckets: one per API key (every request), per organization (every request of its
// keys), a smaller one per API key for requests that create work (runs, jobs, deployments, uploads), and one
// per run credential, which draws on no other bucket, so a run's own event posting never starves because
// its organization floods the api. Sign-in attempts have buckets of their own (SIGN_IN_RATE_LIMITS, on by default).

export const RATE_BUCKETS = ['key', 'organization', 'create', 'run'] as const;
export type RateBucket = (typeof RATE_BUCKETS)[number];

/** A bucket holds `capacity` tokens (the burst) and refills at `perSecond`; each request takes one. */
export interface BucketRule {
  capacity: number;
  perSecond: number;
}
export type RateLimitRules = Partial<Record<RateBucket, BucketRule>>;

/** `RATE_LIMITS=on`: these; a list (`key=100/10s,create=off`) changes single buckets of them. */
export const DEFAULT_RATE_LIMITS: Record<RateBucket, BucketRule> = {
  key: { capacity: 1200, perSecond: 20 },
  organization: { capacity: 6000, perSecond: 100 },
  create: { capacity: 120, perSecond: 2 },
  run: { capacity: 1200, perSecond: 20 },
};

const PERIOD_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600 };

/**
 * RATE_LIMITS: `off` (or unset: no limits), `on` (DEFAULT_RATE_LIMITS), or comma-separated
 * `<bucket>=<requests>/<period>` (period `s`, `10s`, `m`, `5m`, `h`) and `<bucket>=off`, over the defaults.
 * Undefined when off. Problems are pushed, naming the variable.
 */
export function parseRateLimits(text: string | undefined, problems: string[]): RateLimitRules | undefined {
  const value = (text ?? '').trim();
  if (value === '' || value === 'off') return undefined;
  return parseBucketRules('RATE_LIMITS', value, RATE_BUCKETS, DEFAULT_RATE_LIMITS, problems);
}

/**
 * Sign-in attempts (POST /api/sessions, docs/people.md#rate-limits): one bucket per client address and one per
 * account (the email tried, known or not), taken before the password is checked, in PostgreSQL like the others.
 */
export const SIGN_IN_BUCKETS = ['address', 'account'] as const;
export type SignInBucket = (typeof SIGN_IN_BUCKETS)[number];
export type SignInLimitRules = Partial<Record<SignInBucket, BucketRule>>;

/** 30 attempts per address and 10 per account, each refilled over 10 minutes. */
export const DEFAULT_SIGN_IN_LIMITS: Record<SignInBucket, BucketRule> = {
  address: { capacity: 30, perSecond: 30 / 600 },
  account: { capacity: 10, perSecond: 10 / 600 },
};

/**
 * SIGN_IN_RATE_LIMITS: unset or `on` (DEFAULT_SIGN_IN_LIMITS), `off` (none), or items like RATE_LIMITS's
 * (`address=100/10m,account=off`) over the defaults. Undefined when off.
 */
export function parseSignInLimits(text: string | undefined, problems: string[]): SignInLimitRules | undefined {
  const value = (text ?? '').trim();
  if (value === 'off') return undefined;
  if (value === '' || value === 'on') return { ...DEFAULT_SIGN_IN_LIMITS };
  return parseBucketRules('SIGN_IN_RATE_LIMITS', value, SIGN_IN_BUCKETS, DEFAULT_SIGN_IN_LIMITS, problems);
}

/** `on`, or `<bucket>=<requests>/<period>` and `<bucket>=off` items over `defaults`. */
function parseBucketRules<B extends string>(
  variable: string,
  value: string,
  buckets: readonly B[],
  defaults: Record<B, BucketRule>,
  problems: string[],
): Partial<Record<B, BucketRule>> {
  const rules: Partial<Record<B, BucketRule>> = { ...defaults };
  if (value === 'on') return rules;
  for (const item of value.split(',').map((s) => s.trim())) {
    const m = /^(\w+)=(?:(off)|(\d+)\/(\d*)([smh]))$/.exec(item);
    const bucket = m?.[1] as B | undefined;
    if (!m || !buckets.includes(bucket!)) {
      problems.push(
        `${variable}: ${JSON.stringify(item)} is not <bucket>=<requests>/<period> or <bucket>=off ` +
          `(buckets: ${buckets.join(', ')}; periods like s, 10s, m, h)`,
      );
      continue;
    }
    if (m[2]) {
      delete rules[bucket!];
      continue;
    }
    const requests = Number(m[3]);
    const seconds = Number(m[4] || '1') * PERIOD_SECONDS[m[5]];
    if (requests < 1 || seconds < 1) {
      problems.push(`${variable}: ${JSON.stringify(item)} needs at least one request per period of at least 1 s`);
      continue;
    }
    rules[bucket!] = { capacity: requests, perSecond: requests / seconds };
  }
  return rules;
}
