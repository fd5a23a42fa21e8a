// Sign in: with email and password by default (POST /api/sessions: the api sets an HttpOnly session cookie, so
// no secret stays in the page), or, as a second choice, with an API key checked against GET /api/users before it
// is kept for this tab.
import { useState, type FormEvent } from 'react';
import { keyRefusal } from '../api/users';
import { signInWithPassword } from '../api/sessions';
import { session } from '../session';

export function SignIn() {
  const [withKey, setWithKey] = useState(false);
  return (
    <main className="signin" id="main">
      <h1>Tarmac console</h1>
      {withKey ? <KeyForm /> : <PasswordForm />}
      <button type="button" className="link" onClick={() => setWithKey(!withKey)}>
        {withKey ? 'Sign in with email and password' : 'Sign in with an API key instead'}
      </button>
    </main>
  );
}

function PasswordForm() {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await signInWithPassword(email.trim(), password);
      session.cookieSession(true);
    } catch (err) {
      setError((err as Error).message);
      setBusy(false);
    }
  }

  return (
    <form onSubmit={submit} className="card">
      <label htmlFor="email">Email</label>
      <input
        id="email"
        name="email"
        type="email"
        autoComplete="username"
        value={email}
        onChange={(e) => setEmail(e.target.value)}
        required
      />
      <label htmlFor="password">Password</label>
      <input
        id="password"
        name="password"
        type="password"
        autoComplete="current-password"
        value={password}
        onChange={(e) => setPassword(e.target.value)}
        required
      />
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      <button type="submit" disabled={busy || !email.trim() || !password}>
        {busy ? 'Signing in…' : 'Sign in'}
      </button>
    </form>
  );
}

function KeyForm() {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    const refusal = await keyRefusal(key.trim());
    setBusy(false);
    if (refusal === undefined) session.signInWithKey(key.trim());
    else setError(refusal);
  }

  return (
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
  );
}
