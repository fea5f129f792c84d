import { networkInterfaces } from 'node:os';
import type { Socket } from 'node:net';
import type { NextFunction, Request, Response } from 'express';
import { AppError } from '../core/errors/app-error.js';
import type { TerminalManager } from '../core/terminals/terminal-manager.js';
import { sendError } from './error-response.js';

/** This machine's own addresses: only a peer at one of them can be a process in a terminal. */
function localAddresses(): Set<string> {
  const addresses = new Set(['127.0.0.1', '::1']);
  for (const entries of Object.values(networkInterfaces())) for (const entry of entries ?? []) addresses.add(entry.address);
  return addresses;
}

function peerAddress(socket: Socket): string {
  return (socket.remoteAddress ?? '').replace(/^::ffff:/, '');
}

/**
 * Whether a connection comes from inside a terminal (CONTRACT §4): commands must not act on the
 * service with their user's rights, or a held command could be confirmed by another command
 * instead of a person. Decided once per connection, only for peers on this machine, and only
 * while terminals exist, since it reads /proc.
 */
export function terminalConnectionCheck(terminals: TerminalManager): (socket: Socket) => boolean {
  const local = localAddresses();
  const verdicts = new WeakMap<Socket, boolean>();
  return function fromTerminal(socket: Socket): boolean {
    let inside = verdicts.get(socket);
    if (inside === undefined) {
      const { remotePort, localPort } = socket;
      inside =
        remotePort !== undefined &&
        localPort !== undefined &&
        (local.has(peerAddress(socket)) || /^127\./.test(peerAddress(socket))) &&
        terminals.isTerminalConnection(remotePort, localPort);
      verdicts.set(socket, inside);
    }
    return inside;
  };
}

export const terminalCallerRefusal = () => new AppError('SECURITY_VIOLATION', 'Requests from inside a terminal are not accepted');

/** Refuses HTTP requests sent from inside a terminal. */
export function refuseTerminalCallers(terminals: TerminalManager) {
  const fromTerminal = terminalConnectionCheck(terminals);
  return function checkCaller(req: Request, res: Response, next: NextFunction): void {
    if (fromTerminal(req.socket)) {
      sendError(res, terminalCallerRefusal());
      return;
    }
    next();
  };
}
