// Who the console is signed in as. A person signs in with email and password: the api's HttpOnly cookie is the
// credential, so this tab keeps no secret, only whether it is signed in ('session'). The secondary way, an API
// key, keeps the key in this tab's session storage only (never in a URL, never in local storage). Signing out,
// or any 401, ends either.
import { useSyncExternalStore } from 'react';

/** 'unknown' until GET /api/sessions/current has said whether the cookie is a live session. */
export type SignedIn = 'unknown' | 'signed-out' | 'session' | 'key';

const STORAGE_KEY = 'tarmac.apiKey';
const listeners = new Set<() => void>();
let cookieState: 'unknown' | 'signed-out' | 'session' = 'unknown';
const notify = () => listeners.forEach((l) => l());

export const session = {
  key: (): string | null => sessionStorage.getItem(STORAGE_KEY),
  state: (): SignedIn => (sessionStorage.getItem(STORAGE_KEY) ? 'key' : cookieState),
  signInWithKey(key: string) {
    sessionStorage.setItem(STORAGE_KEY, key);
    notify();
  },
  /** The api answered for the cookie: a live session, or none (signed out, ended, expired). */
  cookieSession(live: boolean) {
    cookieState = live ? 'session' : 'signed-out';
    notify();
  },
  signOut() {
    sessionStorage.removeItem(STORAGE_KEY);
    cookieState = 'signed-out';
    notify();
  },
  subscribe(listener: () => void) {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
};

export const useSignedIn = () => useSyncExternalStore(session.subscribe, session.state);

/** The tarmac_csrf cookie's value (readable by design: docs/people.md#csrf), sent back as X-CSRF-Token. */
export function csrfToken(): string | undefined {
  const pair = document.cookie.split('; ').find((c) => c.startsWith('tarmac_csrf='));
  return pair ? decodeURIComponent(pair.slice('tarmac_csrf='.length)) : undefined;
}
