/** The kinds of push a user's sockets receive as `context_update` frames (CONTRACT §8). */
export type UserEventKind = 'pending_command' | 'command_done' | 'model_download' | 'conversation';

export type UserEvent = { kind: UserEventKind } & Record<string, unknown>;

/**
 * An event with the id it got where it was raised: `<ms since epoch>-<counter>-<instance>`, fixed
 * width, so ids from every instance sort in the order the events happened (to the millisecond).
 */
export interface StampedEvent {
  id: string;
  event: UserEvent;
}

export type UserEventListener = (event: UserEvent, id: string) => void;

/** Carries each event to the other instances; `userId` null for a broadcast. */
export type UserEventRelay = (userId: string | null, stamped: StampedEvent) => void;

/** What a reconnecting feed can catch up on: per user, the last events of the last few minutes. */
const RECENT_PER_USER = 100;
const RECENT_MS = 5 * 60 * 1000;
/** Users whose recent events are kept at most; past it the longest-quiet are forgotten. */
const RECENT_USERS = 10_000;
const BROADCAST = '\u0000broadcast';

interface Kept extends StampedEvent {
  at: number;
}

/**
 * Per-user notifications for live clients: a held command, a finished command, a model
 * download's progress, a conversation changed. Fire-and-forget: nobody listening is fine, and a
 * failing listener never reaches the code that published. The last few minutes are kept, so a
 * typed client's subscription resumes after the last event it had (eventsSince).
 */
export class UserEvents {
  private readonly listeners = new Map<string, Set<UserEventListener>>();
  private readonly recent = new Map<string, Kept[]>();
  private relay: UserEventRelay | null = null;
  private counter = 0;

  /** `instance` ends every id, so two instances never make the same one. */
  constructor(private readonly instance = 'local') {}

  /** With several instances, a user's sockets may be on any of them (CONTRACT §9b). */
  relayTo(relay: UserEventRelay): void {
    this.relay = relay;
  }

  publish(userId: string, event: UserEvent): void {
    const stamped = { id: this.nextId(), event };
    this.deliver(userId, stamped);
    this.relay?.(userId, stamped);
  }

  /** For shared things (the models): every user with a listener is told. */
  broadcast(event: UserEvent): void {
    const stamped = { id: this.nextId(), event };
    this.deliver(null, stamped);
    this.relay?.(null, stamped);
  }

  /** An event raised here or on another instance, for this instance's listeners. */
  deliver(userId: string | null, stamped: StampedEvent): void {
    this.keep(userId ?? BROADCAST, stamped);
    if (userId === null) {
      for (const id of this.listeners.keys()) this.notify(id, stamped);
    } else this.notify(userId, stamped);
  }

  /** The user's kept events (broadcasts included) after `afterId`, oldest first. */
  eventsSince(userId: string, afterId: string): StampedEvent[] {
    const cutoff = Date.now() - RECENT_MS;
    return [...(this.recent.get(userId) ?? []), ...(this.recent.get(BROADCAST) ?? [])]
      .filter((kept) => kept.id > afterId && kept.at >= cutoff)
      .sort((a, b) => (a.id < b.id ? -1 : 1))
      .map(({ id, event }) => ({ id, event }));
  }

  /** Returns the unsubscribe function. */
  subscribe(userId: string, listener: UserEventListener): () => void {
    let set = this.listeners.get(userId);
    if (!set) {
      set = new Set();
      this.listeners.set(userId, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(userId) === set) this.listeners.delete(userId);
    };
  }

  private notify(userId: string, { id, event }: StampedEvent): void {
    for (const listener of this.listeners.get(userId) ?? []) {
      try {
        listener(event, id);
      } catch {
        // A listener is a socket writer; its own close handling deals with a broken socket.
      }
    }
  }

  private keep(key: string, stamped: StampedEvent): void {
    const list = this.recent.get(key) ?? [];
    // Re-inserted last, so the map's first entries are the users quiet the longest.
    this.recent.delete(key);
    this.recent.set(key, list);
    const now = Date.now();
    list.push({ ...stamped, at: now });
    while (list.length > RECENT_PER_USER || (list[0] && list[0].at < now - RECENT_MS)) list.shift();
    for (const quiet of this.recent.keys()) {
      if (this.recent.size <= RECENT_USERS) break;
      this.recent.delete(quiet);
    }
  }

  private nextId(): string {
    this.counter = (this.counter + 1) % 1_000_000;
    return `${String(Date.now()).padStart(13, '0')}-${String(this.counter).padStart(6, '0')}-${this.instance}`;
  }
}
