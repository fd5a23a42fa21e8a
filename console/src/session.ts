// Whether the console is signed in. A person signs in with email and password: the api's HttpOnly cookie is the
// credential, so this tab keeps no secret, only whether it is signed in ('session'). Signing out, or any 401,
// ends it.
import { useSyncExternalStore } from 'react';

/** 'unknown' until GET /api/sessions/current has said whether the cookie is a live session. */
export type SignedIn = 'unknown' | 'signed-out' | 'session';

const listeners = new Set<() => void>();
let cookieState: SignedIn = 'unknown';
const notify = () => listeners.forEach((l) => l());

export const session = {
  state: (): SignedIn => cookieState,
  /** The api answered for the cookie: a live session, or none (signed out, ended, expired). */
  cookieSession(live: boolean) {
    cookieState = live ? 'session' : 'signed-out';
    notify();
  },
  signOut() {
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
