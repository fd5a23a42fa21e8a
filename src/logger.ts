import pino, { Logger } from 'pino';
import { traceIds } from './observability/tracing';

/**
 * One pino logger per process; children carry a `component` field. Secrets are redacted by path. A line logged
 * inside a traced request or activity carries its `trace_id` and `span_id`.
 */
export function createLogger(level: string, component: string): Logger {
  return pino({
    level,
    base: { component },
    mixin: traceIds,
    redact: { paths: ['req.headers.authorization', '*.value', '*.secretsKey'], censor: '[redacted]' },
  });
}

export type { Logger };
