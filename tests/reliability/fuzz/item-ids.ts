// Ids in play: which field or parameter names which kind of item, the ids the service hands
// out during a run, and the seeded ones that only requests which must be refused may name.

/** Ids the fuzzer may only use in requests that must be refused, so they cannot be changed. */
export type ProtectedIds = Partial<Record<string, readonly string[]>>;

/**
 * Ids the service handed out during the run, by kind (`conversation`, `terminal`, `stream`, …),
 * filled in by the caller from the replies. Valid-looking requests use them half the time, so
 * they reach real terminals, streams and held commands instead of a 404. (A replay with the same
 * seed sends the same requests, up to the ids the service hands out.)
 */
export type KnownIds = Map<string, string[]>;

/** The kind of item an id field or path parameter names. */
export const idKinds: Partial<Record<string, string>> = {
  id: 'conversation',
  conversation_id: 'conversation',
  conversationId: 'conversation',
  orderId: 'order',
  workspaceId: 'workspace',
  terminalId: 'terminal',
  streamId: 'stream',
  commandId: 'command',
};
