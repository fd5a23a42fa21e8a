// The api's rate limits (RATE_LIMITS; docs/run-control.md#rate-limits): the rules are read by
// src/security/rate-limit-rules.ts, the limiter is src/api/http/rate-limits.ts.
import { parseRateLimits, type RateLimitRules } from '../security/rate-limit-rules';
import type { EnvReader } from './env';

export interface RateLimitSettings {
  /** The token buckets; undefined: no limits (the default). */
  rateLimits: RateLimitRules | undefined;
}

export function readRateLimits(env: EnvReader): RateLimitSettings {
  return { rateLimits: parseRateLimits(env.optional('RATE_LIMITS'), env.problems) };
}
