// The one way the console reaches the platform: the public API through a client typed from the OpenAPI
// document the api produces (schema.gen.ts, generated at build time), so a route change breaks this build.
import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from './schema.gen';
import { csrfToken, session } from '../session';

export type Schemas = components['schemas'];

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

// A signed-in person's calls carry the session cookie (same origin: fetch sends it by default) and, on unsafe
// methods, the CSRF cookie's value.
const withCredential: Middleware = {
  onRequest({ request }) {
    if (!SAFE_METHODS.has(request.method)) {
      const csrf = csrfToken();
      if (csrf) request.headers.set('X-CSRF-Token', csrf);
    }
    return request;
  },
  onResponse({ response }) {
    // An ended, expired or revoked session: back to the sign-in form.
    if (response.status === 401) session.signOut();
    return response;
  },
};

export const api = createClient<paths>({ baseUrl: window.location.origin });
api.use(withCredential);

/** The `{type, errors}` body of a failed call as one line. */
export function errorText(error: unknown): string {
  const e = error as { type?: string; errors?: Array<{ message?: string }> } | undefined;
  if (e?.errors?.length) return `${e.type ?? 'Error'}: ${e.errors.map((x) => x.message).join('; ')}`;
  return e instanceof Error ? e.message : String(e ?? 'Unknown error');
}

/** The data of an openapi-fetch answer (undefined for a 204), or a thrown error with its text (for TanStack Query). */
export async function data<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (error !== undefined || !response.ok) throw new Error(errorText(error ?? `HTTP ${response.status}`));
  return data as T;
}
