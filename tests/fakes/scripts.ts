/**
 * What a fake provider does with one chat request. Tests queue these; each provider module turns
 * them into its own wire format, so one script means the same thing on every provider.
 */

export interface ToolCallScript {
  id: string;
  name: string;
  /** An object is sent as JSON; a string is sent raw, which lets a test send invalid JSON. */
  arguments: unknown;
  /**
   * How many fragments the arguments stream in where the provider streams them (OpenAI,
   * Anthropic): 3 unless given; many, for a provider that streams a call's arguments without end.
   */
  pieces?: number;
}

export interface Usage {
  input: number;
  output: number;
}

export type Script =
  | { kind: 'text'; chunks: string[]; chunkDelayMs?: number; usage?: Usage; finishReason?: 'stop' | 'length' }
  | { kind: 'tools'; calls: ToolCallScript[]; text?: string; usage?: Usage }
  /** Answers with the provider's own error body shape unless `body` is given (a string is sent as is). */
  | { kind: 'fail'; status: number; body?: unknown; headers?: Record<string, string> }
  /** Destroys the socket without any response. */
  | { kind: 'refuse' }
  /** Reads the request, never sends headers; ends when the client gives up or the fake closes. */
  | { kind: 'stall' }
  /** 200 and headers, `after` text chunks, then the socket is destroyed. */
  | { kind: 'cut'; chunks: string[]; after: number; chunkDelayMs?: number }
  /**
   * 200 and headers (sent on their own), `after` text chunks, then a TCP reset at once, with no
   * grace for the client to read what was sent: the immediate failure right after the 2xx.
   */
  | { kind: 'reset'; chunks: string[]; after: number }
  /**
   * 200 and headers, `after` text chunks, then the provider's own in-stream error and the end of the body.
   * `status` picks the error reported, named by the HTTP status the same failure has before a stream
   * (429: the provider's rate-limit error); without it, the provider's overload / server error.
   */
  | { kind: 'streamError'; chunks: string[]; after: number; status?: number }
  /** 200 and headers, `after` text chunks, then silence until the client gives up or the fake closes. */
  | { kind: 'stallMidStream'; chunks: string[]; after: number }
  /**
   * 200 and the right content type, then a body that is not valid SSE JSON / NDJSON / JSON. With
   * `headersFirst` the headers go out on their own before the body (a separate write), as a
   * provider that answers at once and then fails does.
   */
  | { kind: 'malformed'; headersFirst?: boolean };

export const initialDefaultScript: Script = { kind: 'text', chunks: ['Hello', ' from', ' fake'] };

/** A successful answer, whatever script produced it, in provider-neutral terms. */
export interface ChatReply {
  chunks: string[];
  calls: ToolCallScript[];
  usage: Usage;
  finish: 'stop' | 'length' | 'tool_calls';
  chunkDelayMs: number;
}

export type AnsweringScript = Extract<Script, { kind: 'text' | 'tools' | 'cut' | 'reset' | 'streamError' | 'stallMidStream' }>;

export function replyFor(script: AnsweringScript): ChatReply {
  switch (script.kind) {
    case 'text':
      return {
        chunks: script.chunks,
        calls: [],
        usage: script.usage ?? defaultUsage(script.chunks.length),
        finish: script.finishReason ?? 'stop',
        chunkDelayMs: script.chunkDelayMs ?? 0,
      };
    case 'tools': {
      const chunks = script.text === undefined ? [] : [script.text];
      return {
        chunks,
        calls: script.calls,
        usage: script.usage ?? defaultUsage(chunks.length + script.calls.length),
        finish: 'tool_calls',
        chunkDelayMs: 0,
      };
    }
    case 'cut':
    case 'reset':
    case 'streamError':
    case 'stallMidStream':
      return {
        chunks: script.chunks,
        calls: [],
        usage: defaultUsage(script.chunks.length),
        finish: 'stop',
        chunkDelayMs: script.kind === 'cut' ? (script.chunkDelayMs ?? 0) : 0,
      };
  }
}

/** Deterministic numbers so tests that don't script usage can still assert it arrived. */
function defaultUsage(outputParts: number): Usage {
  return { input: 10, output: Math.max(1, outputParts) };
}

/** The arguments exactly as they go on the wire. */
export function argumentsText(call: ToolCallScript): string {
  return typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
}

/**
 * The arguments as an object, for providers that send objects (Anthropic non-streaming, Ollama).
 * A raw string that is not a JSON object stays a string, so the fake sends what the test asked for.
 */
export function argumentsValue(call: ToolCallScript): unknown {
  if (typeof call.arguments !== 'string') return call.arguments;
  try {
    const parsed: unknown = JSON.parse(call.arguments);
    return typeof parsed === 'object' && parsed !== null ? parsed : call.arguments;
  } catch {
    return call.arguments;
  }
}

/**
 * Splits streamed tool arguments into at least two pieces (when there are two characters), the
 * way real providers stream them, so clients that only handle whole JSON fail against the fake.
 */
export function fragments(text: string, pieces = 3): string[] {
  if (text.length < 2) return [text];
  const size = Math.ceil(text.length / Math.min(pieces, text.length));
  const parts: string[] = [];
  for (let at = 0; at < text.length; at += size) parts.push(text.slice(at, at + size));
  return parts;
}
