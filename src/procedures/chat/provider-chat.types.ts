import type { ProviderName } from '../../core/config/env-schema.js';
import type { ProcedureMeta } from '../meta.js';

const label: Record<ProviderName, string> = { openai: 'OpenAI (Chat Completions)', anthropic: 'Anthropic (Messages)', ollama: 'Ollama' };

export function providerMessageMeta(provider: ProviderName) {
  return {
    openapi: {
      method: 'POST',
      path: `/api/${provider}/message`,
      tags: ['chat'],
      summary: `Send a message to ${label[provider]} and get the whole answer as JSON${provider === 'ollama' ? '' : ' (apiKey required)'}`,
    },
  } satisfies ProcedureMeta;
}

export function providerStreamMeta(provider: ProviderName) {
  return {
    openapi: {
      method: 'POST',
      path: `/api/${provider}/stream`,
      tags: ['chat'],
      summary: `Send a message to ${label[provider]} and stream the answer as Server-Sent Events${provider === 'ollama' ? '' : ' (apiKey required)'}`,
    },
    sse: true,
  } satisfies ProcedureMeta;
}
