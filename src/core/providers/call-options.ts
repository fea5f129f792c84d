// OpenAI's request parameters beyond messages, tools, temperature and max tokens, in provider-
// neutral terms (CONTRACT §12). Each wire protocol sends them in its own words; the ones a
// provider has no word for are refused before the call (core/chat/chat-options.ts), never dropped.

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | {
      type: 'json_schema';
      /** OpenAI's `json_schema.name`; also the name of Anthropic's answer tool where one is needed. */
      name: string;
      description?: string | undefined;
      schema?: Record<string, unknown> | undefined;
      strict?: boolean | null | undefined;
    };

/** `required` must call some tool; `{ name }` must call that one. */
export type ToolChoice = 'auto' | 'none' | 'required' | { name: string };

/** OpenAI's values (the SDK's `ReasoningEffort`). */
export const reasoningEfforts = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'] as const;
export type ReasoningEffort = (typeof reasoningEfforts)[number];

export interface CallOptions {
  responseFormat?: ResponseFormat | undefined;
  toolChoice?: ToolChoice | undefined;
  /** Only `false` changes anything: every provider may call several tools at once by default. */
  parallelToolCalls?: boolean | undefined;
  stop?: readonly string[] | undefined;
  topP?: number | undefined;
  seed?: number | undefined;
  presencePenalty?: number | undefined;
  frequencyPenalty?: number | undefined;
  reasoningEffort?: ReasoningEffort | undefined;
  logprobs?: boolean | undefined;
  topLogprobs?: number | undefined;
}

/** One generated token's log probability, in OpenAI's shape (what a `/v1` reply carries back). */
export interface TokenLogprob {
  token: string;
  logprob: number;
  bytes: number[] | null;
  top_logprobs: { token: string; logprob: number; bytes: number[] | null }[];
}

/** Whether the caller asked for log probabilities (`logprobs: false` alone asks nothing). */
export function wantsLogprobs(options: CallOptions | undefined): boolean {
  return options?.logprobs === true || options?.topLogprobs !== undefined;
}

/** The JSON Schema a structured answer must follow; JSON mode is "any object". */
export function answerSchema(format: Exclude<ResponseFormat, { type: 'text' }>): Record<string, unknown> {
  return format.type === 'json_schema' && format.schema !== undefined ? format.schema : { type: 'object' };
}

function isNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

type Entry = { token?: unknown; logprob?: unknown; bytes?: unknown; top_logprobs?: unknown };

function isEntry(value: unknown): value is Entry {
  return typeof value === 'object' && value !== null;
}

function bytesOf(value: unknown): number[] | null {
  return Array.isArray(value) && value.every((byte) => Number.isInteger(byte)) ? (value as number[]) : null;
}

/**
 * A provider's token log probabilities, kept to OpenAI's fields: what reaches the caller is
 * checked data, not whatever else an upstream put next to it. Entries that do not fit are left out.
 */
export function readLogprobs(value: unknown): TokenLogprob[] {
  if (!Array.isArray(value)) return [];
  const tokens: TokenLogprob[] = [];
  for (const entry of value as unknown[]) {
    if (!isEntry(entry) || typeof entry.token !== 'string' || !isNumber(entry.logprob)) continue;
    const top = Array.isArray(entry.top_logprobs) ? (entry.top_logprobs as unknown[]).filter(isEntry) : [];
    tokens.push({
      token: entry.token,
      logprob: entry.logprob,
      bytes: bytesOf(entry.bytes),
      top_logprobs: top
        .filter((alt) => typeof alt.token === 'string' && isNumber(alt.logprob))
        .map((alt) => ({ token: alt.token as string, logprob: alt.logprob as number, bytes: bytesOf(alt.bytes) })),
    });
  }
  return tokens;
}
