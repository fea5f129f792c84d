// The two framings providers stream in: Server-Sent Events (OpenAI, Anthropic) and
// newline-delimited JSON (Ollama). Both receive the body in pieces split anywhere.

/** Splits text arriving in pieces into lines (LF or CRLF), holding back an unfinished last line. */
export class LineSplitter {
  private rest = '';

  push(text: string, onLine: (line: string) => void): void {
    const buffer = this.rest === '' ? text : this.rest + text;
    let start = 0;
    for (let newline = buffer.indexOf('\n'); newline !== -1; newline = buffer.indexOf('\n', start)) {
      const end = newline > start && buffer.charCodeAt(newline - 1) === 13 ? newline - 1 : newline;
      onLine(buffer.slice(start, end));
      start = newline + 1;
    }
    this.rest = start === 0 ? buffer : buffer.slice(start);
  }

  /** The unfinished last line, once the body has ended. */
  takeRest(): string {
    const rest = this.rest;
    this.rest = '';
    return rest;
  }
}

/**
 * Server-Sent Events as the WHATWG spec frames them: `data:` lines joined by newlines, `event:`
 * naming the event, comments (`:`) skipped, a blank line dispatching. An event the body ends in
 * the middle of is dropped, as the spec says; the protocols then notice their missing end.
 */
export class SseReader {
  private readonly lines = new LineSplitter();
  private data: string[] = [];
  private event = '';

  constructor(private readonly onEvent: (event: string, data: string) => void) {}

  push(text: string): void {
    this.lines.push(text, this.onLine);
  }

  end(): void {
    const rest = this.lines.takeRest();
    if (rest !== '') this.onLine(rest);
  }

  private readonly onLine = (line: string): void => {
    if (line === '') {
      if (this.data.length > 0) {
        const data = this.data.length === 1 ? (this.data[0] ?? '') : this.data.join('\n');
        const event = this.event;
        this.data = [];
        this.event = '';
        this.onEvent(event, data);
      }
      this.event = '';
      return;
    }
    if (line.charCodeAt(0) === 58) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const valueAt = colon === -1 ? line.length : line.charCodeAt(colon + 1) === 32 ? colon + 2 : colon + 1;
    if (field === 'data') this.data.push(line.slice(valueAt));
    else if (field === 'event') this.event = line.slice(valueAt);
  };
}

/** Parses one JSON value of a stream; anything else means the answer cannot be read. */
export function parseStreamJson(text: string, onFailure: () => Error): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw onFailure();
  }
}
