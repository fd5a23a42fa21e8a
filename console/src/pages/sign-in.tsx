// Sign in with email and password (POST /api/sessions), or through the OIDC provider when the installation has
// one (GET /api/sign-in-methods): either way the api sets an HttpOnly session cookie, so no secret stays in the
// page. API keys are for programs; the console never keeps one. A refused OIDC sign-in comes back here with its
// reason in the fragment (#oidc_error=), which is shown and dropped from the address.
import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { queryKeys } from '../api/query-keys';
import { signInMethods, signInWithPassword } from '../api/sessions';
import { session } from '../session';

/** The reason of a refused OIDC sign-in, read once from the fragment. */
function takeOidcError(): string | undefined {
  const match = /^#oidc_error=(.*)$/.exec(window.location.hash);
  if (!match) return undefined;
  history.replaceState(null, '', window.location.pathname + window.location.search);
  return decodeURIComponent(match[1]);
}
// Read as the console loads, before the router sends `/console/` on to the dashboard (without the fragment).
const oidcErrorOnLoad = takeOidcError();

export function SignIn() {
  const methods = useQuery({ queryKey: queryKeys.signInMethods, queryFn: signInMethods });
  const [oidcError] = useState(oidcErrorOnLoad);
  const oidc = methods.data?.oidc;
  return (
    <main className="signin" id="main">
      <h1>Tarmac console</h1>
      {oidcError && (
        <p role="alert" className="error">
          {oidcError}
        </p>
      )}
      {oidc && (
        <div className="card">
          <a className="button" href={`${oidc.start_url}?return_to=${encodeURIComponent(window.location.pathname)}`}>
            Sign in with {oidc.name}
          </a>
        </div>
      )}
      <PasswordForm />
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
