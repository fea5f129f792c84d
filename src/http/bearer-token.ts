import type { Request } from 'express';

/**
 * The bearer token of a request: `Authorization: Bearer <token>`, or where allowed the
 * `access_token` query parameter. An Authorization header of another scheme yields a value that
 * fails verification as malformed rather than counting as no credential, so the client learns its
 * header was seen and refused.
 */
export function bearerToken(req: Request, acceptQuery: boolean): string | null {
  const header = req.get('authorization');
  if (header !== undefined) {
    const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
    return match?.[1] ?? header;
  }
  if (!acceptQuery) return null;
  const fromQuery = new URL(req.originalUrl, 'http://localhost').searchParams.get('access_token');
  return fromQuery === null || fromQuery === '' ? null : fromQuery;
}
