import { hkdfSync } from 'node:crypto';
import type { Request, Response } from 'express';
import { EncryptJWT, jwtDecrypt, type JWTPayload } from 'jose';

// Cookies whose content the browser can neither read nor alter: a JWT encrypted with A256GCM
// (authenticated encryption, so any change fails to decrypt) under a key derived from OIDC_SECRET.
// Each kind of cookie has its own key (HKDF `info`), so one kind can never be replayed as another.

/** Browsers keep at most about 4096 bytes per cookie; longer values are split over numbered cookies. */
const chunkSize = 3800;
/** Leftover chunks from an earlier, longer value are cleared up to this many. */
const maxChunks = 8;

export interface CookieOptions {
  name: string;
  path: string;
  secure: boolean;
  maxAgeSeconds: number;
}

export class SealedCookie<T extends JWTPayload> {
  private readonly key: Uint8Array;

  constructor(
    secret: string,
    private readonly purpose: string,
    private readonly options: CookieOptions,
  ) {
    this.key = new Uint8Array(hkdfSync('sha256', secret, 'assistant web login', `cookie:${purpose}`, 32));
  }

  async write(req: Request, res: Response, value: T, maxAgeSeconds = this.options.maxAgeSeconds): Promise<void> {
    const sealed = await new EncryptJWT(value)
      .setProtectedHeader({ alg: 'dir', enc: 'A256GCM' })
      .setIssuedAt()
      .setExpirationTime(`${maxAgeSeconds}s`)
      .setAudience(this.purpose)
      .encrypt(this.key);
    const parts = sealed.length <= chunkSize ? [sealed] : (sealed.match(new RegExp(`.{1,${chunkSize}}`, 'g')) ?? []);
    const attributes = { ...this.attributes(), maxAge: maxAgeSeconds * 1000 };
    const written = new Set<string>();
    if (parts.length === 1) {
      res.cookie(this.options.name, sealed, attributes);
      written.add(this.options.name);
    } else {
      parts.forEach((part, index) => {
        res.cookie(`${this.options.name}.${index}`, part, attributes);
        written.add(`${this.options.name}.${index}`);
      });
    }
    for (const name of this.namesIn(req)) if (!written.has(name)) res.clearCookie(name, this.attributes());
  }

  /** The cookie's value, or null when absent, expired, altered or sealed under another secret. */
  async read(req: Request): Promise<T | null> {
    const cookies = cookiesOf(req);
    let sealed = cookies.get(this.options.name);
    if (sealed === undefined) {
      const parts: string[] = [];
      for (let index = 0; index < maxChunks; index += 1) {
        const part = cookies.get(`${this.options.name}.${index}`);
        if (part === undefined) break;
        parts.push(part);
      }
      sealed = parts.length > 0 ? parts.join('') : undefined;
    }
    if (sealed === undefined) return null;
    try {
      const { payload } = await jwtDecrypt<T>(sealed, this.key, { audience: this.purpose, keyManagementAlgorithms: ['dir'], contentEncryptionAlgorithms: ['A256GCM'] });
      return payload;
    } catch {
      return null;
    }
  }

  clear(req: Request, res: Response): void {
    const names = new Set([this.options.name, ...this.namesIn(req)]);
    for (const name of names) res.clearCookie(name, this.attributes());
  }

  /** httpOnly: no script reads it; SameSite=Lax: sent on the provider's top-level redirect back, not on cross-site subrequests. */
  private attributes() {
    return { httpOnly: true, sameSite: 'lax' as const, secure: this.options.secure, path: this.options.path };
  }

  private namesIn(req: Request): string[] {
    const prefix = `${this.options.name}.`;
    return [...cookiesOf(req).keys()].filter((name) => name === this.options.name || name.startsWith(prefix));
  }
}

/** The request's cookies by name (the first of duplicates, as browsers send the most specific path first). */
export function cookiesOf(req: Request): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const pair of (req.headers.cookie ?? '').split(';')) {
    const separator = pair.indexOf('=');
    if (separator < 0) continue;
    const name = pair.slice(0, separator).trim();
    let value = pair.slice(separator + 1).trim();
    if (value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    try {
      value = decodeURIComponent(value);
    } catch {
      // Left as sent: a sealed value is base64url and never needs decoding.
    }
    if (name && !cookies.has(name)) cookies.set(name, value);
  }
  return cookies;
}

/** `__Host-` binds a cookie to this exact origin (Secure, Path=/, no Domain); `__Secure-` at least to https. */
export function cookieName(base: string, secure: boolean, path: string): string {
  if (!secure) return base;
  return path === '/' ? `__Host-${base}` : `__Secure-${base}`;
}
