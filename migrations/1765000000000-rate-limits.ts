import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Rate limits (src/api/http/rate-limits.ts, docs/run-control.md#rate-limits): token buckets in PostgreSQL, so
 * every api replica shares them and no other service is needed. The table is UNLOGGED: after a crash the
 * buckets start full, which only forgives what was spent, and taking a token writes no WAL.
 *
 * `take_rate_tokens` refills the named buckets (at `per_second`, up to `capacities`) and takes one token from
 * each only when every one of them has a token, so a request refused by one bucket spends nothing of the
 * others (a flooding key does not drain its organization's bucket). A request is one round trip.
 */
export class RateLimits1765000000000 implements MigrationInterface {
  name = 'RateLimits1765000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE UNLOGGED TABLE rate_limit_buckets (
        bucket text PRIMARY KEY,
        tokens double precision NOT NULL,
        refreshed_at timestamptz NOT NULL,
        -- When the bucket is full again if nothing takes from it: a bucket full for a while can go (absent = full).
        full_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX rate_limit_buckets_full_at ON rate_limit_buckets (full_at)`);
    await q.query(`
      CREATE FUNCTION take_rate_tokens(names text[], capacities float8[], per_second float8[])
      RETURNS TABLE (name text, allowed boolean, remaining float8)
      LANGUAGE plpgsql AS $$
      DECLARE
        at timestamptz := clock_timestamp();
        have float8[] := '{}';
        got float8;
        ok boolean := true;
        i int;
      BEGIN
        -- In name order: two requests that take the same buckets never wait for each other in a circle.
        FOR i IN SELECT u.o::int FROM unnest(names) WITH ORDINALITY AS u(n, o) ORDER BY u.n LOOP
          INSERT INTO rate_limit_buckets AS b (bucket, tokens, refreshed_at, full_at)
          VALUES (names[i], capacities[i], at, at)
          ON CONFLICT (bucket) DO UPDATE SET
            tokens = LEAST(capacities[i],
                           b.tokens + GREATEST(0, extract(epoch FROM at - b.refreshed_at)) * per_second[i]),
            refreshed_at = GREATEST(b.refreshed_at, at)
          RETURNING b.tokens INTO got;
          have[i] := got;
          ok := ok AND got >= 1;
        END LOOP;
        FOR i IN 1 .. cardinality(names) LOOP
          IF ok THEN
            have[i] := have[i] - 1;
          END IF;
          UPDATE rate_limit_buckets b
             SET tokens = have[i],
                 full_at = at + make_interval(secs => (capacities[i] - have[i]) / per_second[i])
           WHERE b.bucket = names[i];
          name := names[i];
          allowed := ok;
          remaining := have[i];
          RETURN NEXT;
        END LOOP;
        -- Now and then the buckets that have been full for a minute go.
        IF random() < 0.01 THEN
          DELETE FROM rate_limit_buckets b WHERE b.full_at < at - interval '1 minute';
        END IF;
      END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION take_rate_tokens(text[], float8[], float8[]); DROP TABLE rate_limit_buckets`);
  }
}
