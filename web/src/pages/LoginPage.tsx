// Sign-in at the organization's address, and on the bare domain a form that sends people to theirs.
import { useMemo, useState, type FormEvent } from 'react';
import { ApiError } from '../api/errors';
import { signIn } from '../api/session';
import { Field, FormError } from '../components/fields';
import { Notice } from '../components/Notice';
import { useMessages } from '../i18n';
import { useAction } from '../lib/use-action';
import { useTitle } from '../lib/use-title';

/** The server names its base domain in a meta tag; without it (the Vite dev server), a host without a dot is bare. */
export function isBaseDomain(): boolean {
  const base = document.querySelector<HTMLMetaElement>('meta[name="assent-base-domain"]')?.content;
  const host = window.location.hostname;
  return base ? host === base : !host.includes('.');
}

export function LoginPage({ ended }: { ended: boolean }) {
  const m = useMessages();
  const host = window.location.host;
  const slug = window.location.hostname.split('.')[0] ?? host;
  useTitle(m.login.submit, slug);
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const { busy, error, onSubmit } = useAction(async () => {
    await signIn(email, password);
  });

  // One object per failure (memoised): the error box takes the focus when a new failure arrives, not on every render.
  const explained = useMemo(
    () =>
      error?.status === 401
        ? new ApiError(401, m.login.wrong)
        : error?.status === 403
          ? new ApiError(403, m.login.notMember(host))
          : error?.status === 429
            ? new ApiError(429, m.login.throttled(Math.max(1, Math.ceil((error.retryAfterSeconds ?? 60) / 60))))
            : error,
    [error, m, host],
  );

  return (
    <main id="main" className="signin">
      <form className="card signin-card" onSubmit={onSubmit()} noValidate>
        <h1>{m.login.title(slug)}</h1>
        {ended ? <Notice kind="error">{m.app.sessionEnded}</Notice> : null}
        <FormError error={explained} fields={['email', 'password']} focus />
        <Field label={m.login.email} field="email" error={error}>
          {(ids) => <input {...ids} type="email" name="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} />}
        </Field>
        <Field label={m.login.password} field="password" error={error}>
          {(ids) => (
            <input {...ids} type="password" name="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
          )}
        </Field>
        <button type="submit" className="button primary" disabled={busy}>
          {busy ? m.login.submitting : m.login.submit}
        </button>
      </form>
    </main>
  );
}

const SLUG = /^[a-z][a-z0-9-]{1,61}[a-z0-9]$/;

export function OrganizationPicker() {
  const m = useMessages();
  useTitle(m.login.pickTitle);
  const [slug, setSlug] = useState('');
  const [invalid, setInvalid] = useState(false);
  const go = (e: FormEvent) => {
    e.preventDefault();
    const s = slug.trim().toLowerCase();
    if (!SLUG.test(s)) {
      setInvalid(true);
      return;
    }
    const { protocol, host } = window.location;
    window.location.assign(`${protocol}//${s}.${host}/`);
  };
  const error = invalid ? new ApiError(400, m.login.pickInvalid, [{ field: 'organization', message: m.login.pickInvalid }]) : null;
  return (
    <main id="main" className="signin">
      <form className="card signin-card" onSubmit={go} noValidate>
        <h1>{m.login.pickTitle}</h1>
        <p>{m.login.pickIntro}</p>
        <Field label={m.login.pickLabel} field="organization" error={error}>
          {(ids) => <input {...ids} name="organization" autoCapitalize="none" spellCheck={false} value={slug} onChange={(e) => setSlug(e.target.value)} />}
        </Field>
        <button type="submit" className="button primary">
          {m.login.pickSubmit}
        </button>
      </form>
    </main>
  );
}
