// The api process: where it listens and is reached, request and list bounds, event streams, shutdown.
import type { EnvReader } from './env';

export interface ApiSettings {
  port: number;
  host: string;
  /** Base URL clients reach the api at (no trailing slash); presigned asset URLs and GT_CLOUD_BASE_URL use it. */
  publicBaseUrl: string;
  assetUrlTtlSeconds: number;
  maxAssetBytes: number;
  maxJsonBodyBytes: number;
  pageSizeDefault: number;
  pageSizeMax: number;
  inviteTtlSeconds: number;
  /**
   * SSE event streams: keep-alive comment interval, the safety re-check for missed notifications, and how many
   * streams one organization may hold open on one api process (all of them; run-changes streams among them).
   */
  sse: {
    keepAliveMs: number;
    recheckMs: number;
    maxStreamsPerOrganization: number;
    maxRunChangeStreamsPerOrganization: number;
  };
  /** How long `POST/GET /api/functions/{id}/execute` waits for the run to end before answering 202 with the run. */
  functionExecuteTimeoutSeconds: number;
  /** How long api and worker drain on SIGTERM. */
  shutdownGraceMs: number;
}

export function readApi(env: EnvReader): ApiSettings {
  const port = env.int('PORT', 8080, 0, 65535);
  const pageSizeMax = env.int('PAGE_SIZE_MAX', 100, 1, 10_000);
  return {
    port,
    host: env.string('HOST', '0.0.0.0'),
    publicBaseUrl: env.url('PUBLIC_BASE_URL', `http://localhost:${port}`),
    assetUrlTtlSeconds: env.int('ASSET_URL_TTL_SECONDS', 3600, 1, 7 * 24 * 3600),
    maxAssetBytes: env.int('MAX_ASSET_BYTES', 1024 * 1024 * 1024, 1),
    maxJsonBodyBytes: env.int('MAX_JSON_BODY_BYTES', 1024 * 1024, 1024),
    pageSizeDefault: Math.min(env.int('PAGE_SIZE_DEFAULT', 20, 1, 10_000), pageSizeMax),
    pageSizeMax,
    inviteTtlSeconds: env.int('INVITE_TTL_SECONDS', 7 * 24 * 3600, 1),
    sse: {
      keepAliveMs: env.int('SSE_KEEPALIVE_MS', 15_000, 100, 3_600_000),
      recheckMs: env.int('SSE_RECHECK_MS', 5_000, 100, 3_600_000),
      maxStreamsPerOrganization: env.int('SSE_MAX_STREAMS_PER_ORG', 200, 1, 100_000),
      maxRunChangeStreamsPerOrganization: env.int('SSE_MAX_RUN_CHANGE_STREAMS_PER_ORG', 50, 1, 100_000),
    },
    functionExecuteTimeoutSeconds: env.int('FUNCTION_EXECUTE_TIMEOUT_SECONDS', 60, 1, 3600),
    shutdownGraceMs: env.int('SHUTDOWN_GRACE_MS', 10_000, 0),
  };
}
