// Logs, Prometheus metrics and traces (docs/production.md#metrics).
import type { EnvReader } from './env';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export interface ObservabilitySettings {
  logLevel: string;
  metrics: {
    /** Bearer token `GET /metrics` requires; unset: open (keep the port private). */
    token: string | undefined;
    /** The worker's metrics listener (`GET /metrics`); undefined: none. */
    workerPort: number | undefined;
    /** Where the Temporal SDK's own Prometheus exporter binds (host:port); unset: a free loopback port. */
    temporalAddress: string | undefined;
  };
  /** OTLP/HTTP endpoint (base URL; spans go to `<it>/v1/traces`); undefined: no tracing. */
  otlpEndpoint: string | undefined;
}

export function readObservability(env: EnvReader): ObservabilitySettings {
  return {
    logLevel: env.oneOf('LOG_LEVEL', 'info', LOG_LEVELS),
    metrics: {
      token: env.optional('METRICS_TOKEN'),
      workerPort:
        env.optional('WORKER_METRICS_PORT') === undefined ? undefined : env.int('WORKER_METRICS_PORT', 0, 0, 65535),
      temporalAddress: env.optional('TEMPORAL_METRICS_ADDRESS'),
    },
    otlpEndpoint: env.url('OTEL_EXPORTER_OTLP_ENDPOINT'),
  };
}
