import type { ProviderName } from '../config/env-schema.js';
import { anthropicMessages } from './anthropic-messages.js';
import type { ChatCall, StepResult, WireProtocol } from './chat-protocol.js';
import { ollamaChat } from './ollama-chat.js';
import { openAIChat } from './openai-chat.js';
import { sendToProvider } from './provider-http.js';

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
  onText: (text: string) => void;
}

/**
 * One streamed model call in the provider's own wire format: its text goes to `onText` as it
 * arrives, and its tool calls, finish reason and usage come back when it has ended. Failures
 * reject (see provider-http.ts and provider-errors.ts); chat-error.ts maps them.
 */
export async function callModel(call: ChatCall, options: ModelCallOptions): Promise<StepResult> {
  const protocol = protocols[options.provider];
  const wire = protocol.request(call, options.apiKey);
  const decoder = protocol.decoder(options.onText);
  await sendToProvider(
    { url: options.baseUrl + wire.path, headers: wire.headers, body: wire.body, signal: options.signal, timeoutMs: options.timeoutMs },
    {
      onResponse: options.onResponse,
      onData: (text) => {
        decoder.push(text);
      },
    },
  );
  return decoder.end();
}
