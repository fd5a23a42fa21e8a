// Integration handlers (docs/integrations.md): the chat app and the code host app.
import type { EnvReader, JobLimits } from './env';

export interface IntegrationSettings {
  integrations: {
    /** Deliveries per integration per minute past which the handler answers 429 (counted in PostgreSQL). */
    ratePerMinute: number;
    /** Largest request body a handler reads; 413 beyond. */
    maxBodyBytes: number;
    /** The chat app's Web API (`<base>/chat.postMessage`). */
    chatappApiBaseUrl: string;
    /** The code host's REST API (`<base>/app/installations/{id}/access_tokens`). */
    codehostApiBaseUrl: string;
  };
  /**
   * One delivery's work (the workflow integration-delivery-<uuid>): its wall time
   * (INTEGRATION_DELIVERY_TIME_LIMIT_SECONDS, a workflow timer).
   */
  integrationDeliveryJob: JobLimits;
}

export function readIntegrations(env: EnvReader): IntegrationSettings {
  return {
    integrations: {
      ratePerMinute: env.int('INTEGRATION_RATE_LIMIT_PER_MINUTE', 120, 1, 1_000_000),
      maxBodyBytes: env.int('INTEGRATION_MAX_BODY_BYTES', 1024 * 1024, 1024, 100 * 1024 * 1024),
      chatappApiBaseUrl: env.url('CHATAPP_API_BASE_URL', 'https://slack.com/api'),
      codehostApiBaseUrl: env.url('CODEHOST_API_BASE_URL', 'https://api.github.com'),
    },
    integrationDeliveryJob: env.jobLimits('INTEGRATION_DELIVERY_TIME_LIMIT_SECONDS', 3600, 7 * 24 * 3600),
  };
}
