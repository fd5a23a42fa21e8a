// How long an Idempotency-Key holds (docs/run-control.md#idempotency-keys): IDEMPOTENCY_TTL, `24h` by default.
import type { EnvReader } from './env';

export interface IdempotencySettings {
  /** A repeat of a create within this many seconds answers the first record; later, the key is free again. */
  idempotencyTtlSeconds: number;
}

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };
export const MAX_IDEMPOTENCY_TTL_SECONDS = 30 * 86_400;

/** `90s`, `15m`, `24h`, `7d` (or bare seconds) → seconds; undefined when malformed. */
export function parseDurationSeconds(text: string): number | undefined {
  const m = /^(\d+)\s*([smhd]?)$/.exec(text);
  return m ? Number(m[1]) * UNIT_SECONDS[m[2] || 's'] : undefined;
}

export function readIdempotency(env: EnvReader): IdempotencySettings {
  const fallback = 24 * 3600;
  const raw = env.optional('IDEMPOTENCY_TTL');
  if (raw === undefined) return { idempotencyTtlSeconds: fallback };
  const seconds = parseDurationSeconds(raw.toLowerCase());
  if (seconds === undefined || seconds < 1 || seconds > MAX_IDEMPOTENCY_TTL_SECONDS) {
    env.problem(`IDEMPOTENCY_TTL must be a duration from 1s to 30d (e.g. 24h, 90m, 7d), got ${JSON.stringify(raw)}`);
    return { idempotencyTtlSeconds: fallback };
  }
  return { idempotencyTtlSeconds: seconds };
}
