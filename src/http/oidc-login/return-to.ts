import { AppError } from '../../core/errors/app-error.js';

const maxLength = 2048;

/**
 * Where to send the browser after login: a path on this service only. Anything that a browser
 * could read as another origin is refused, not silently replaced, so a crafted login link fails
 * visibly: `//evil.example`, `/\evil.example` (browsers treat `\` as `/`), schemes, control characters,
 * and paths whose dot segments resolve to one of those.
 */
export function safeReturnTo(value: unknown): string {
  if (value === undefined || value === '') return '/';
  if (typeof value !== 'string' || value.length > maxLength) throw refused();
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  if (!value.startsWith('/') || value.startsWith('//') || /[\\\u0000-\u001f\u007f]/.test(value)) throw refused();
  const base = 'http://return-to.invalid';
  const resolved = new URL(value, base);
  if (resolved.origin !== base) throw refused();
  const path = `${resolved.pathname}${resolved.search}${resolved.hash}`;
  // Checked again after the parser: dot segments collapse (`/.//evil.example`, `/a/..//evil.example`
  // becomes `//evil.example`), and what is sent as Location is this normalised string, not the input.
  if (/^\/[/\\]/.test(path)) throw refused();
  return path;
}

function refused(): AppError {
  return AppError.invalid('returnTo must be a path on this service (such as /conversations)', { issues: [{ path: ['returnTo'], message: 'must be a same-origin relative path' }] });
}
