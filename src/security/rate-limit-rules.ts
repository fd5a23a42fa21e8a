// The rules of the api's rate limits (RATE_LIMITS; the limiter is src/api/http/rate-limits.ts, the buckets live
// in PostgreSQL). Token buckets: one per API key (every request), per organization (every request of its
// keys), a smaller one per API key for requests that create work (runs, jobs, deployments, uploads), and one
// per run credential, which draws on no other bucket, so a run's own event posting never starves because
// its organization floods the api.

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
  const rules: RateLimitRules = { ...DEFAULT_RATE_LIMITS };
  if (value === 'on') return rules;
  for (const item of value.split(',').map((s) => s.trim())) {
    const m = /^(\w+)=(?:(off)|(\d+)\/(\d*)([smh]))$/.exec(item);
    const bucket = m?.[1] as RateBucket | undefined;
    if (!m || !RATE_BUCKETS.includes(bucket!)) {
      problems.push(
        `RATE_LIMITS: ${JSON.stringify(item)} is not <bucket>=<requests>/<period> or <bucket>=off ` +
          `(buckets: ${RATE_BUCKETS.join(', ')}; periods like s, 10s, m, h)`,
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
      problems.push(`RATE_LIMITS: ${JSON.stringify(item)} needs at least one request per period of at least 1 s`);
      continue;
    }
    rules[bucket!] = { capacity: requests, perSecond: requests / seconds };
  }
  return rules;
}
