import type { User } from './permissions.js';

/** Who asks: the user (for ownership and role checks) and the client address (for the audit log). */
export interface Actor {
  user: User;
  ip: string;
}
