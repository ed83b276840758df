// Getting the session cookie. The server normally trades `/?token=T` for the
// cookie and redirects the token away; if a token still reaches the page (a
// proxy that dropped the redirect, an old link), trade it here and scrub it
// from the address bar and history. Without a cookie, ask for the token.
import { api, ApiError } from './net/api';
import { h } from './ui/dom';

/** If the URL carries `?token=`, logs in with it and removes it from the URL. */
export async function consumeUrlToken(): Promise<void> {
  const url = new URL(location.href);
  const token = url.searchParams.get('token');
  if (token === null) return;
  url.searchParams.delete('token');
  // Scrub first: the token must not linger in history even if the login fails.
  history.replaceState(history.state, '', url.pathname + url.search + url.hash);
  try {
    await api.login(token);
  } catch {
    // A wrong token: the API answers 401 next and the form asks for a good one.
  }
}

/** Set in this tab once the server showed it is a share link's (sessionStorage: it outlives a reload, not the tab). */
const SHARED_KEY = 'duet.shared';

/** Remembers that this tab runs on a share link's cookie. */
export function markShared(): void {
  try { sessionStorage.setItem(SHARED_KEY, '1'); } catch { /* storage off: the token form it is */ }
}

/** This tab now runs on a credential of its own: profiles loaded (also after the reload that follows a token login). */
export function clearShared(): void {
  try { sessionStorage.removeItem(SHARED_KEY); } catch { /* nothing kept */ }
}

/** Whether this tab came from a share link (a 401 then means the link ended, not that a token is wanted). */
export function isShared(): boolean {
  try { return sessionStorage.getItem(SHARED_KEY) === '1'; } catch { return false; }
}

/**
 * Tells a share link's guest that the link ended. The owner's token form
 * would ask them for a credential they never had.
 */
export function showShareEnded(root: HTMLElement): void {
  const card = h(
    'section',
    { class: 'login-card share-ended', role: 'alert' },
    h('h1', {}, 'duet'),
    h('p', {}, 'This share link has ended: it was revoked, or it expired.'),
    h('p', {}, 'Ask the person who shared the session for a new link.'),
  );
  root.replaceChildren(h('main', { class: 'login' }, card));
}

/** Shows the "paste your token" form in `root`; resolves once logged in. */
export function askForToken(root: HTMLElement): Promise<void> {
  return new Promise((resolve) => {
    const input = h('input', { type: 'password', id: 'token', name: 'token', autocomplete: 'current-password', required: true, spellcheck: 'false' });
    const error = h('p', { class: 'login-error', role: 'alert' });
    const button = h('button', { type: 'submit', class: 'btn btn-primary btn-large' }, 'Sign in');
    const form = h(
      'form',
      {
        class: 'login-card',
        onsubmit: (ev: Event) => {
          ev.preventDefault();
          button.disabled = true;
          error.textContent = '';
          api.login(input.value.trim()).then(
            () => { resolve(); },
            (err: unknown) => {
              button.disabled = false;
              error.textContent = err instanceof ApiError && err.status === 401 ? 'That token was not accepted.' : `Could not sign in: ${err instanceof Error ? err.message : String(err)}`;
              input.select();
            },
          );
        },
      },
      h('h1', {}, 'duet'),
      h('p', {}, 'Paste the access token that ', h('code', {}, 'duet serve'), ' printed (the part after ', h('code', {}, '?token='), ').'),
      h('label', { for: 'token' }, 'Access token'),
      input,
      error,
      button,
    );
    root.replaceChildren(h('main', { class: 'login' }, form));
    input.focus();
  });
}
