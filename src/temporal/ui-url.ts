import type { Config } from '../config';

/** The Temporal Web UI: TEMPORAL_UI_URL, else the local dev server's when Tarmac runs it (no TEMPORAL_ADDRESS). */
export const temporalUiUrl = (config: Config): string | undefined =>
  config.temporal.uiUrl ?? (config.temporal.address ? undefined : `http://localhost:${config.temporal.devUiPort}`);
