// The shell: sign-in with an API secret (kept in sessionStorage only), the navigation, and the
// page the hash names.
import { useEffect, useRef, useState } from 'preact/hooks';
import { PAGES, useRoute } from './router';
import { ApiError, onUnauthorized, request, session } from './api';
import { Field, Notice } from './components';
import { TokensPage } from './tokens';
import { CheckPage } from './check';
import { DecisionsPage } from './decisions';
import { JwtPage } from './jwt';
import { WebhooksPage } from './webhooks';
import { IssuersPage } from './issuers';
import { AnalyticsPage } from './analytics';
import { LivePage } from './live';
import { SecuredPage } from './secured';

function SignIn({ onSignedIn, notice }: { onSignedIn: () => void; notice: string }) {
  const [secret, setSecret] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError('');
    const value = secret.trim();
    try {
      // The cheapest call that needs a valid secret.
      await request('GET', '/api/publish_token/list?itemsOnPage=1', undefined, value);
      session.set(value);
      onSignedIn();
    } catch (err) {
      setError(
        err instanceof ApiError && err.status === 401
          ? 'Sign-in failed: Streamgate did not accept this API secret. Check that you copied all 64 characters of the current secret.'
          : `Sign-in failed: ${(err as Error).message}`,
      );
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="signin">
      <h1>Streamgate dashboard</h1>
      {notice && <Notice kind="info">{notice}</Notice>}
      <form onSubmit={submit} aria-describedby="signin-help">
        <p id="signin-help">
          Sign in with your account's API secret (first start: the file <code>data/default-api-secret</code>). It stays in
          this browser tab's session storage and is sent only to this Streamgate.
        </p>
        <Field id="api-secret" label="API secret" type="password" value={secret} onInput={setSecret} required autoComplete="current-password" />
        {error && <Notice kind="error">{error}</Notice>}
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}

export function App() {
  const [signedIn, setSignedIn] = useState(() => session.get() !== null);
  const [notice, setNotice] = useState('');
  const route = useRoute();
  const mainRef = useRef<HTMLElement>(null);

  useEffect(() => {
    onUnauthorized(() => {
      session.clear();
      setNotice('Your API secret is no longer accepted (it was refreshed or deleted). Sign in again.');
      setSignedIn(false);
    });
  }, []);
  // After navigation (not on the first load), move focus to the new page's heading, so keyboard
  // and screen-reader users land on what changed.
  const shownPage = useRef(route.page);
  useEffect(() => {
    if (shownPage.current === route.page) return;
    shownPage.current = route.page;
    mainRef.current?.querySelector<HTMLElement>('h1')?.focus();
  }, [route.page]);

  if (!signedIn) return <SignIn notice={notice} onSignedIn={() => {
          setNotice('');
          setSignedIn(true);
        }} />;

  const signOut = () => {
    session.clear();
    setNotice('Signed out.');
    setSignedIn(false);
  };
  return (
    <div class="layout">
      {/* biome-ignore lint/a11y/useValidAnchor: a skip link is an anchor by convention; it moves focus without changing the location's hash, which the dashboard's pages use */}
      <a
        class="skip"
        href="#main"
        onClick={(e) => {
          e.preventDefault();
          mainRef.current?.focus();
        }}
      >
        Skip to content
      </a>
      <header>
        <span class="brand">Streamgate</span>
        <nav aria-label="Dashboard">
          <ul>
            {PAGES.map(([p, text]) => (
              <li key={p}>
                <a href={`#/${p}`} aria-current={route.page === p ? 'page' : undefined}>
                  {text}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main id="main" ref={mainRef} tabIndex={-1}>
        {route.page === 'publish' && <TokensPage kind="publish" key="publish" />}
        {route.page === 'subscribe' && <TokensPage kind="subscribe" key="subscribe" />}
        {route.page === 'check' && <CheckPage params={route.params} />}
        {route.page === 'decisions' && <DecisionsPage params={route.params} />}
        {route.page === 'jwt' && <JwtPage params={route.params} />}
        {route.page === 'webhooks' && <WebhooksPage />}
        {route.page === 'issuers' && <IssuersPage />}
        {route.page === 'analytics' && <AnalyticsPage />}
        {route.page === 'live' && <LivePage />}
        {route.page === 'secured' && <SecuredPage />}
      </main>
    </div>
  );
}
