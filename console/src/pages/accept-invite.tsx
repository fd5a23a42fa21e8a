// The page of an invite link (`/console/accept-invite#token=...`, CreateInvite's `accept_url`): the token is read
// from the URL's fragment, which no request carries, and then dropped from the address bar. It shows what the
// link invites to; a person with no password yet sets one (typed twice) and is signed in with it once the
// invite is accepted; a person with a password accepts, then signs in as usual. With an OIDC provider, anyone
// may instead join through it (the provider's verified email must be the invite's): the token goes in a POST's
// body, never in a URL.
import { useQuery } from '@tanstack/react-query';
import { useEffect, useState, type FormEvent } from 'react';
import { Link, useNavigate } from '@tanstack/react-router';
import { queryKeys } from '../api/query-keys';
import { acceptInviteLink, beginOidcSignIn, readInviteLink, signInMethods, signInWithPassword } from '../api/sessions';
import { NewPasswordFields, PASSWORD_MIN_LENGTH } from '../components/new-password';
import { session } from '../session';

type InviteLink = Awaited<ReturnType<typeof readInviteLink>>;

export function AcceptInvitePage() {
  const [token] = useState(() => {
    const t = new URLSearchParams(window.location.hash.slice(1)).get('token') ?? undefined;
    if (t) history.replaceState(null, '', window.location.pathname);
    return t;
  });
  const [link, setLink] = useState<InviteLink | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    if (token) readInviteLink(token).then(setLink, (err: Error) => setError(err.message));
  }, [token]);

  return (
    <main className="signin" id="main">
      <h1>Accept an invite</h1>
      {!token ? (
        <p role="alert" className="error">
          This link has no token. Open the whole link you were given, or ask for a new invite.
        </p>
      ) : !link ? (
        error ? (
          <p role="alert" className="error">
            {error}
          </p>
        ) : (
          <p aria-busy="true">Reading the invite…</p>
        )
      ) : (
        <AcceptForm token={token} link={link} />
      )}
    </main>
  );
}

function AcceptForm({ token, link }: { token: string; link: InviteLink }) {
  const navigate = useNavigate();
  const needsPassword = link.account !== 'HAS_PASSWORD';
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const [joined, setJoined] = useState(false);
  const methods = useQuery({ queryKey: queryKeys.signInMethods, queryFn: signInMethods });
  const oidc = methods.data?.oidc;
  const { invite } = link;

  async function joinWithOidc() {
    setBusy(true);
    setError(undefined);
    try {
      window.location.assign(await beginOidcSignIn({ invite_token: token, return_to: '/console/dashboard' }));
    } catch (err) {
      setError((err as Error).message);
      setBusy(false);
    }
  }

  if (invite.status !== 'PENDING')
    return (
      <p role="alert" className="error">
        This invite is {invite.status.toLowerCase()}: ask {invite.organization_name} for a new one.
      </p>
    );
  if (joined)
    return (
      <p role="status" className="card">
        You joined {invite.organization_name}. <Link to="/dashboard">Sign in</Link> with your email and password.
      </p>
    );

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (needsPassword && password !== again) return setError('The two passwords differ.');
    setBusy(true);
    setError(undefined);
    try {
      await acceptInviteLink(token, needsPassword ? password : undefined);
    } catch (err) {
      setError((err as Error).message);
      return setBusy(false);
    }
    if (!needsPassword) return setJoined(true);
    await signInWithPassword(invite.email, password).then(
      () => {
        session.cookieSession(true);
        void navigate({ to: '/dashboard' });
      },
      () => setJoined(true), // accepted; signing in is left to the sign-in form
    );
  }

  return (
    <form onSubmit={submit} className="card">
      <p>
        <strong>{invite.organization_name}</strong> invites <strong>{invite.email}</strong>. The invite ends{' '}
        {new Date(invite.expires_at).toLocaleString()}.
      </p>
      {needsPassword ? (
        <>
          <NewPasswordFields
            labels={['Choose a password', 'The password again']}
            password={password}
            again={again}
            onPassword={setPassword}
            onAgain={setAgain}
          />
          <p className="hint">At least {PASSWORD_MIN_LENGTH} characters.</p>
        </>
      ) : (
        <p className="hint">You have an account here: accept, then sign in with your password.</p>
      )}
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      <button type="submit" disabled={busy || (needsPassword && (!password || !again))}>
        {busy ? 'Accepting…' : needsPassword ? 'Set password and join' : 'Accept and join'}
      </button>
      {oidc && (
        <button type="button" disabled={busy} onClick={() => void joinWithOidc()}>
          Join with {oidc.name}
        </button>
      )}
    </form>
  );
}
