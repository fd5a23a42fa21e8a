// Sign in with an API key: checked against the API (GET /api/users) before it is kept for this tab.
import { useState, type FormEvent } from 'react';
import { keyRefusal } from '../api/users';
import { session } from '../session';

export function SignIn() {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    const refusal = await keyRefusal(key.trim());
    setBusy(false);
    if (refusal === undefined) session.signIn(key.trim());
    else setError(refusal);
  }

  return (
    <main className="signin" id="main">
      <h1>Tarmac console</h1>
      <form onSubmit={submit} className="card">
        <label htmlFor="api-key">API key</label>
        <input
          id="api-key"
          name="api-key"
          type="password"
          autoComplete="off"
          value={key}
          onChange={(e) => setKey(e.target.value)}
          required
        />
        <p className="hint">
          The key stays in this tab only (session storage) and is sent to this server's API; signing out forgets it.
        </p>
        {error && (
          <p role="alert" className="error">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy || !key.trim()}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
