import type { ProviderName } from '../config/env-schema.js';
import { anthropicMessages } from './anthropic-messages.js';
import type { ChatCall, OutputSink, StepResult, TextSink, WireProtocol } from './chat-protocol.js';
import { ollamaChat } from './ollama-chat.js';
import { openAIChat } from './openai-chat.js';
import { ProviderUnreachableError } from './provider-errors.js';
import { sendToProvider } from './provider-http.js';
import { providerSettingNames, shownAddress } from './provider-settings.js';
import { classifyUpstreamFailure } from './upstream-error.js';

const protocols: Record<ProviderName, WireProtocol> = { openai: openAIChat, anthropic: anthropicMessages, ollama: ollamaChat };

export interface ModelCallOptions {
  provider: ProviderName;
  /** The provider's base URL, version segment included, no trailing slash. */
  baseUrl: string;
  /** Never logged, stored or echoed; undefined for Ollama. */
  apiKey: string | undefined;
  signal: AbortSignal;
  timeoutMs: number;
  /** The provider answered 2xx. */
  onResponse: () => void;
  onText: TextSink;
  /** Every other piece of output the model streams (tool calls, reasoning): see chat-protocol.ts. */
  onOutput: OutputSink;
}

/**
 * One streamed model call in the provider's own wire format: its text goes to `onText` and the
 * rest of its output to `onOutput` as it arrives, and its tool calls, finish reason and usage
 * come back when it has ended. Failures
 * reject (see provider-http.ts and provider-errors.ts); chat-error.ts maps them.
 */
export async function callModel(call: ChatCall, options: ModelCallOptions): Promise<StepResult> {
  const protocol = protocols[options.provider];
  const decoder = protocol.decoder({ onText: options.onText, onOutput: options.onOutput }, call);
  const progress = { answered: false };
  const onResponse = () => {
    progress.answered = true;
    options.onResponse();
  };
  try {
    await send(protocol, call, { ...options, onResponse }, decoder);
  } catch (error) {
    // A provider that could not be reached at all is told apart from one that failed while
    // answering: its message names the address and the setting to change (chat-error.ts).
    if (!progress.answered && classifyUpstreamFailure(error)?.kind === 'network') {
      throw new ProviderUnreachableError(shownAddress(options.baseUrl), providerSettingNames[options.provider].address, error);
    }
    throw error;
  }
  return decoder.end();
}

/**
 * Not async, so the request's JSON (the whole history window) is not kept in callModel's frame
 * for as long as the answer streams.
 */
function send(protocol: WireProtocol, call: ChatCall, options: ModelCallOptions, decoder: { push(text: string): void }): Promise<void> {
  const wire = protocol.request(call, options.apiKey);
  return sendToProvider(
    { url: options.baseUrl + wire.path, headers: wire.headers, json: wire.json, signal: options.signal, timeoutMs: options.timeoutMs },
    {
      onResponse: options.onResponse,
      onData: (text) => {
        decoder.push(text);
      },
    },
  );
}
