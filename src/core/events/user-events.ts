/** The kinds of push a user's sockets receive as `context_update` frames (CONTRACT §8). */
export type UserEventKind = 'pending_command' | 'command_done' | 'model_download' | 'conversation';

export type UserEvent = { kind: UserEventKind } & Record<string, unknown>;

export type UserEventListener = (event: UserEvent) => void;

/**
 * Per-user notifications for live clients: a held command, a finished command, a model
 * download's progress, a conversation changed. Fire-and-forget: nobody listening is fine, and a
 * failing listener never reaches the code that published.
 */
export class UserEvents {
  private readonly listeners = new Map<string, Set<UserEventListener>>();

  publish(userId: string, event: UserEvent): void {
    for (const listener of this.listeners.get(userId) ?? []) {
      try {
        listener(event);
      } catch {
        // A listener is a socket writer; its own close handling deals with a broken socket.
      }
    }
  }

  /** For shared things (the models): every user with a listener is told. */
  broadcast(event: UserEvent): void {
    for (const userId of this.listeners.keys()) this.publish(userId, event);
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
}
