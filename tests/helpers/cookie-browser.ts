// A browser reduced to what a sign-in needs: a cookie jar and redirects followed one at a time, so
// a test sees every hop. Cookies are kept by name for the host, as browsers keep them across
// ports; `Path` is honoured because the service scopes its cookies to /auth.

export interface Hop {
  url: string;
  status: number;
  headers: Headers;
  text: string;
  /** The Set-Cookie lines of this reply. */
  setCookies: string[];
  /** The absolute next address of a redirect. */
  location: string | null;
}

interface StoredCookie {
  value: string;
  path: string;
}

export class CookieBrowser {
  readonly jar = new Map<string, StoredCookie>();

  async request(url: string, init: { method?: string; form?: Record<string, string>; headers?: Record<string, string> } = {}): Promise<Hop> {
    const target = new URL(url);
    const headers: Record<string, string> = { ...init.headers };
    const cookie = this.cookieHeader(target);
    if (cookie) headers.cookie = cookie;
    let body: string | undefined;
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(init.form).toString();
    }
    const response = await fetch(url, { method: init.method ?? (init.form ? 'POST' : 'GET'), headers, body, redirect: 'manual' });
    const setCookies = response.headers.getSetCookie();
    for (const line of setCookies) this.store(line);
    const locationHeader = response.headers.get('location');
    return {
      url,
      status: response.status,
      headers: response.headers,
      text: await response.text(),
      setCookies,
      location: locationHeader === null ? null : new URL(locationHeader, url).href,
    };
  }

  /** The value of a cookie, or undefined. */
  cookie(name: string): string | undefined {
    return this.jar.get(name)?.value;
  }

  setCookie(name: string, value: string, path = '/'): void {
    this.jar.set(name, { value, path });
  }

  private cookieHeader(url: URL): string {
    return [...this.jar.entries()]
      .filter(([, cookie]) => url.pathname === cookie.path || url.pathname.startsWith(cookie.path.endsWith('/') ? cookie.path : `${cookie.path}/`))
      .map(([name, cookie]) => `${name}=${cookie.value}`)
      .join('; ');
  }

  private store(line: string): void {
    const [pair = '', ...attributes] = line.split(';').map((part) => part.trim());
    const separator = pair.indexOf('=');
    const name = pair.slice(0, separator);
    const value = pair.slice(separator + 1);
    const attribute = (key: string) =>
      attributes.find((part) => part.toLowerCase().startsWith(`${key}=`))?.slice(key.length + 1);
    const maxAge = attribute('max-age');
    const expires = attribute('expires');
    const gone = (maxAge !== undefined && Number(maxAge) <= 0) || (expires !== undefined && Date.parse(expires) <= Date.now()) || value === '';
    if (gone) this.jar.delete(name);
    else this.jar.set(name, { value, path: attribute('path') ?? '/' });
  }
}

/** Parses Set-Cookie attributes of the named cookie in one reply, lower-cased, or null when it is not set there. */
export function cookieAttributes(setCookies: string[], name: string): Set<string> | null {
  const line = setCookies.find((candidate) => candidate.startsWith(`${name}=`));
  if (!line) return null;
  return new Set(
    line
      .split(';')
      .slice(1)
      .map((part) => part.trim().toLowerCase()),
  );
}
