// A small Server-Sent Events client for tests: real HTTP through fetch, the bytes parsed as the
// EventSource specification says (`id:`, `data:` lines, blank line ends an event, `:` comments).

export interface SseEvent {
  id: string | undefined;
  data: any;
}

export interface SseStream {
  status: number;
  headers: Headers;
  /** The JSON body when the reply is not an event stream (an error envelope). */
  json: any;
  /** Every event until the stream ends (or `stop` after the predicate). */
  events(stop?: (event: SseEvent) => boolean): Promise<SseEvent[]>;
  comments: string[];
  /** Closes the connection as a browser tab would. */
  cancel(): Promise<void>;
}

export async function openSse(url: string, init: RequestInit & { json?: unknown } = {}): Promise<SseStream> {
  const headers = new Headers(init.headers);
  let body = init.body;
  if (init.json !== undefined) {
    body = JSON.stringify(init.json);
    headers.set('content-type', 'application/json');
  }
  const response = await fetch(url, { ...init, method: init.method ?? (body === undefined ? 'GET' : 'POST'), headers, body });
  const comments: string[] = [];
  if (!response.headers.get('content-type')?.startsWith('text/event-stream')) {
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      json: text ? JSON.parse(text) : undefined,
      events: () => Promise.resolve([]),
      comments,
      cancel: () => Promise.resolve(),
    };
  }
  if (!response.body) throw new Error("an event stream without a body");
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  const read = async (stop?: (event: SseEvent) => boolean): Promise<SseEvent[]> => {
    const events: SseEvent[] = [];
    for (;;) {
      let boundary = buffer.indexOf('\n\n');
      while (boundary >= 0) {
        const block = buffer.slice(0, boundary);
        buffer = buffer.slice(boundary + 2);
        let id: string | undefined;
        const data: string[] = [];
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) comments.push(line.slice(1).trim());
          else if (line.startsWith('id:')) id = line.slice(3).trim();
          else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
        }
        if (data.length > 0) {
          const event = { id, data: JSON.parse(data.join('\n')) };
          events.push(event);
          if (stop?.(event)) return events;
        }
        boundary = buffer.indexOf('\n\n');
      }
      const { value, done } = await reader.read();
      if (done) return events;
      buffer += value;
    }
  };
  return {
    status: response.status,
    headers: response.headers,
    json: undefined,
    events: read,
    comments,
    cancel: () => reader.cancel(),
  };
}

/** The event types in order, for exact sequence assertions. */
export function typesOf(events: readonly SseEvent[]): string[] {
  return events.map((event) => String(event.data.type));
}
