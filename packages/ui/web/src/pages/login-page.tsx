/**
 * The login page: one field for an API key (the node's `e2b_…` key, or a
 * gateway client key). The key goes to `POST /ui/login` once; the server
 * keeps it and gives the browser an HttpOnly session cookie.
 *
 * @module
 */
import { useState, type FormEvent } from 'react';
import { login, type Session } from '../api.js';

/** The login form. */
export function LoginPage({ onLogin }: { onLogin: (s: Session) => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const submit = (e: FormEvent): void => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    login(key).then(onLogin, (err: unknown) => {
      setError(err instanceof Error ? err.message : String(err));
      setBusy(false);
    });
  };
  return (
    <div className="login">
      <form onSubmit={submit} data-testid="login-form">
        <h1>aenv</h1>
        <p>Log in with an API key of this node or gateway.</p>
        <input
          type="password"
          autoComplete="off"
          placeholder="e2b_…"
          value={key}
          onChange={(e) => setKey(e.target.value)}
          data-testid="login-key"
          autoFocus
        />
        <button type="submit" disabled={busy} data-testid="login-submit">
          {busy ? 'Checking…' : 'Log in'}
        </button>
        {error !== undefined && (
          <div className="error" data-testid="login-error">
            {error}
          </div>
        )}
      </form>
    </div>
  );
}
