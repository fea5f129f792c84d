import type { NextFunction, Request, Response } from 'express';
import type { Config } from '../core/config/load-config.js';
import { AppError } from '../core/errors/app-error.js';
import { sendError } from './error-response.js';

const wildcardHosts = new Set(['0.0.0.0', '::', '']);

/** The host names accepted in a `Host` header (CONTRACT §1): the DNS-rebinding guard. */
export function acceptedHosts(config: Config): Set<string> {
  const hosts = new Set(['localhost', '127.0.0.1', '::1']);
  if (!wildcardHosts.has(config.HOST)) hosts.add(config.HOST.toLowerCase());
  if (config.OIDC_BASE_URL) hosts.add(new URL(config.OIDC_BASE_URL).hostname.toLowerCase());
  for (const host of config.ALLOWED_HOSTS) hosts.add(hostName(host));
  return hosts;
}

/** The name part of a Host header value: without the port, IPv6 brackets removed, lower case. */
export function hostName(header: string): string {
  const value = header.trim().toLowerCase();
  if (value.startsWith('[')) return value.slice(1, value.indexOf(']'));
  return value.replace(/:\d*$/, '');
}

/** A request whose Host is not one of ours answers 403 before anything else runs (CONTRACT §2). */
export function hostGuard(config: Config) {
  const hosts = acceptedHosts(config);
  return function checkHost(req: Request, res: Response, next: NextFunction): void {
    const host = req.headers.host;
    if (host !== undefined && hosts.has(hostName(host))) {
      next();
      return;
    }
    sendError(res, new AppError('SECURITY_VIOLATION', 'Host header not accepted; add it to ALLOWED_HOSTS'));
  };
}
