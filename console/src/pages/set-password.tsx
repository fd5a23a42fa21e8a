// The page of a one-time password-reset link (`/console/set-password#token=...`, printed by the first `npm start`
// and `npm run admin -- reset-password`): the token is read from the URL's fragment, which no request carries, and
// then dropped from the address bar; the new password, typed twice, goes to POST /api/password-resets/{token}.
import { useState, type FormEvent } from 'react';
import { Link } from '@tanstack/react-router';
import { setPasswordWithReset } from '../api/sessions';
import { NewPasswordFields, PASSWORD_MIN_LENGTH } from '../components/new-password';
import { session } from '../session';

function tokenOfFragment(): string | undefined {
  return new URLSearchParams(window.location.hash.slice(1)).get('token') ?? undefined;
}

export function SetPasswordPage() {
  const [token] = useState(() => {
    const t = tokenOfFragment();
    if (t) history.replaceState(null, '', window.location.pathname);
    return t;
  });
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState(false);

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (password !== again) return setError('The two passwords differ.');
    setBusy(true);
    setError(undefined);
    try {
      await setPasswordWithReset(token!, password);
      session.signOut(); // setting a password ends every session of its user
      setDone(true);
    } catch (err) {
      setError((err as Error).message);
    }
    setBusy(false);
  }

  return (
    <main className="signin" id="main">
      <h1>Set your password</h1>
      {done ? (
        <p role="status" className="card">
          Your password is set. <Link to="/dashboard">Sign in</Link> with your email and this password.
        </p>
      ) : !token ? (
        <p role="alert" className="error">
          This link has no token. Open the whole link you were given, or ask your administrator for a new one.
        </p>
      ) : (
        <form onSubmit={submit} className="card">
          <NewPasswordFields
            labels={['New password', 'New password again']}
            password={password}
            again={again}
            onPassword={setPassword}
            onAgain={setAgain}
          />
          <p className="hint">At least {PASSWORD_MIN_LENGTH} characters. The link works once.</p>
          {error && (
            <p role="alert" className="error">
              {error}
            </p>
          )}
          <button type="submit" disabled={busy || !password || !again}>
            {busy ? 'Setting…' : 'Set password'}
          </button>
        </form>
      )}
    </main>
  );
}
