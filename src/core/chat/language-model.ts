import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import type { LanguageModel } from 'ai';
import { createOllama } from 'ollama-ai-provider-v2';
import type { ProviderName } from '../config/env-schema.js';
import type { ProviderSettings } from '../config/load-config.js';
import type { ChatTarget } from './chat-target.js';

/**
 * The AI SDK model for a chat target, made per request because the key may be the caller's.
 * OpenAI goes through `.chat()` so it speaks Chat Completions (what vLLM, LM Studio, OpenRouter
 * and llama.cpp also speak), Anthropic the Messages API, Ollama its native /api/chat.
 */
export function createLanguageModel(
  target: ChatTarget,
  settings: Record<ProviderName, ProviderSettings>,
  fetch: typeof globalThis.fetch,
): LanguageModel {
  const baseURL = settings[target.provider].baseUrl;
  switch (target.provider) {
    case 'openai':
      return createOpenAI({ baseURL, apiKey: target.apiKey ?? '', fetch }).chat(target.model);
    case 'anthropic':
      return createAnthropic({ baseURL, apiKey: target.apiKey ?? '', fetch })(target.model);
    case 'ollama':
      return createOllama({ baseURL: `${baseURL}/api`, fetch })(target.model);
  }
}
