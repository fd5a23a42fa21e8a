// The API key the user signed in with: in this tab's session storage only (never in a URL, never in local
// storage); signing out, or any 401, forgets it.
import { useSyncExternalStore } from 'react';

const STORAGE_KEY = 'tarmac.apiKey';
const listeners = new Set<() => void>();

export const session = {
  key: (): string | null => sessionStorage.getItem(STORAGE_KEY),
  signIn(key: string) {
    sessionStorage.setItem(STORAGE_KEY, key);
    listeners.forEach((l) => l());
  },
  signOut() {
    sessionStorage.removeItem(STORAGE_KEY);
    listeners.forEach((l) => l());
  },
  subscribe(listener: () => void) {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
};

export const useSessionKey = () => useSyncExternalStore(session.subscribe, session.key);
