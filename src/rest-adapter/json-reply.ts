import type { Response } from 'express';

type ETagOf = (body: Buffer, encoding?: BufferEncoding) => string | undefined;

/**
 * A procedure's JSON reply, byte for byte what `res.status(status).json(data)` sends (the same
 * Content-Type, Content-Length and ETag, in that order, after the headers already set), written
 * directly. Express's `json` and `send` re-read and re-parse the Content-Type they have just set
 * and look its charset up, about a third of what the bridge spent on a whole chat reply beside
 * the socket write. Only replies where Express would do nothing else take this path: a GET or
 * HEAD (freshness, 304, no body), a status without a body (204, 205, 304), headers or JSON
 * settings someone chose, all go through Express as before.
 */
export function sendJsonReply(res: Response, status: number, data: unknown): void {
  const { app, req } = res;
  const etagOf = app.get('etag fn') as ETagOf | undefined;
  const direct =
    req.method !== 'GET' &&
    req.method !== 'HEAD' &&
    status !== 204 &&
    status !== 205 &&
    status !== 304 &&
    typeof etagOf === 'function' &&
    app.get('json replacer') === undefined &&
    app.get('json spaces') === undefined &&
    app.get('json escape') === undefined &&
    !res.hasHeader('Content-Type') &&
    !res.hasHeader('ETag') &&
    !res.hasHeader('Transfer-Encoding');
  const body = direct ? (JSON.stringify(data) as string | undefined) : undefined;
  if (body === undefined || etagOf === undefined) {
    res.status(status).json(data);
    return;
  }
  const chunk = Buffer.from(body, 'utf8');
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', String(chunk.length));
  const etag = etagOf(chunk, undefined);
  if (etag) res.setHeader('ETag', etag);
  res.end(chunk);
}
