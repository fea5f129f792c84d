import type { CallOptions, TokenLogprob } from './call-options.js';

// The provider-neutral shape of one model call. The engine speaks only this; each wire protocol
// (openai-chat.ts, anthropic-messages.ts, ollama-chat.ts) turns it into its own request and turns
// its streamed answer back into text deltas, the other output's pieces and a step result.

export interface ToolCallRecord {
  id: string;
  name: string;
  input: unknown;
}

export interface ToolResultRecord {
  id: string;
  name: string;
  output: unknown;
}

/**
 * A tool result as the text every provider takes: the service's own tools give objects, sent as
 * JSON; a result that is already text (what an OpenAI-compatible caller sends back for its own
 * tools) goes as it is, not quoted a second time.
 */
export function toolResultText(output: unknown): string {
  return typeof output === 'string' ? output : JSON.stringify(output ?? null);
}

/** A message of the conversation as every provider is sent it (the system prompt travels apart). */
export type ChatMessage =
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls: readonly ToolCallRecord[] }
  | { role: 'tool'; results: readonly ToolResultRecord[] };

/** A tool as offered to a model: its name, what it does, and its arguments as JSON Schema. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface ChatCall {
  model: string;
  system: string;
  messages: readonly ChatMessage[];
  tools: readonly ToolSpec[];
  /** Undefined: the provider's own default (Anthropic is sent none unless the caller asked, CONTRACT §12). */
  temperature: number | undefined;
  maxTokens: number | undefined;
  /** OpenAI's other parameters, each sent in the provider's own terms (call-options.ts). */
  options?: CallOptions | undefined;
}

export type StepFinish = 'stop' | 'length' | 'tool-calls' | 'other';

export interface StepUsage {
  inputTokens: number;
  outputTokens: number;
}

/** A tool call as the model sent it; `argumentsText` is JSON text (possibly invalid: models err). */
export interface RawToolCall {
  id: string;
  name: string;
  argumentsText: string;
}

/** What one model call produced besides the text it streamed. */
export interface StepResult {
  toolCalls: RawToolCall[];
  finish: StepFinish;
  usage: StepUsage;
}

/** An HTTP request to a provider, ready to send. */
export interface WireRequest {
  /** Appended to the provider's base URL. */
  path: string;
  headers: Record<string, string>;
  /** The JSON body as a value: serialised in steps on the way out (json-in-steps.ts). */
  json: Record<string, unknown>;
}

/**
 * Reads a provider's streamed answer piece by piece. `push` gets the body as it arrives (text,
 * split anywhere) and reports text deltas and other output through the sinks it was made with;
 * `end` is called when the body is complete and returns the step's result. Both throw
 * ProviderProtocolError when the answer cannot be read, and ProviderStreamError when the provider
 * reports a failure inside it.
 */
export interface StreamDecoder {
  push(text: string): void;
  end(): StepResult;
}

/** Where a decoder reports text; `logprobs` are the tokens' (OpenAI only, when asked for). */
export type TextSink = (text: string, logprobs?: readonly TokenLogprob[]) => void;

/**
 * Where a decoder reports every other piece of output the model generates as it streams: tool
 * calls' names and argument fragments, reasoning ("thinking"), refusals. None of it is the
 * answer's text, but all of it is output the provider bills and counts against the `max_tokens`
 * it was sent, so it is held to the call's output cap and its worst case as text is
 * (output-cap.ts, CONTRACT §13). A piece is reported as it arrives, before it is parsed or even
 * kept, whether or not it turns out valid.
 */
export type OutputSink = (piece: string) => void;

/** The two places a decoder reports what it reads. */
export interface DecoderSinks {
  onText: TextSink;
  onOutput: OutputSink;
}

export interface WireProtocol {
  request: (call: ChatCall, apiKey: string | undefined) => WireRequest;
  /** `call` is the request the answer belongs to (Anthropic reads its answer tool from it). */
  decoder: (sinks: DecoderSinks, call?: ChatCall) => StreamDecoder;
}
