import pino, { Logger } from 'pino';

/** One pino logger per process; children carry a `component` field. Secrets are redacted by path. */
export function createLogger(level: string, component: string): Logger {
  return pino({
    level,
    base: { component },
    redact: { paths: ['req.headers.authorization', '*.value', '*.secretsKey'], censor: '[redacted]' },
  });
}

export type { Logger };
