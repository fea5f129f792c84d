import type { AuthSession } from './auth-session.js';
import { el } from './dom.js';

/** Who is signed in, with Log out; or Log in when the server wants a login first. */
export function renderAccount(root: HTMLElement, session: AuthSession): void {
  if (!session.authEnabled) {
    root.append(el('span', { class: 'account-name' }, 'Local mode'));
    return;
  }
  if (!session.authenticated) {
    root.append(el('a', { class: 'button primary', href: '/auth/login' }, 'Log in'));
    return;
  }
  const user = session.user;
  const name = [user?.name, user?.preferred_username, user?.email, user?.userId].find((value): value is string => typeof value === 'string') ?? 'Signed in';
  const roles = Array.isArray(user?.roles) ? user.roles.join(', ') : '';
  root.append(el('span', { class: 'account-name', title: roles ? `Roles: ${roles}` : undefined }, name), el('a', { class: 'button', href: '/auth/logout' }, 'Log out'));
}

/** The page shown instead of the app while a login is needed. */
export function renderLoginRequired(main: HTMLElement): void {
  main.append(
    el(
      'section',
      { class: 'login-required' },
      el('h2', {}, 'Please log in'),
      el('p', {}, 'This assistant needs you to sign in with your organisation account.'),
      el('a', { class: 'button primary', href: '/auth/login' }, 'Log in'),
    ),
  );
}

/** Renewal found the session gone (expired, logged out elsewhere): offer Log in again. */
export function renderSignedOut(root: HTMLElement): void {
  root.replaceChildren(el('span', { class: 'account-name' }, 'Signed out'), el('a', { class: 'button primary', href: '/auth/login' }, 'Log in'));
}
