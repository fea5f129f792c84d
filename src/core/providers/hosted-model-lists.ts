import { z } from 'zod';
import type { ProviderSettings } from '../config/load-config.js';
import { AppError } from '../errors/app-error.js';
import { upstreamError, upstreamStatusError } from './upstream-error.js';

export type HostedProvider = 'openai' | 'anthropic';

const openAiModelList = z.object({ data: z.array(z.object({ id: z.string() })) });

const anthropicModelList = z.object({
  data: z.array(z.object({ id: z.string() })),
  has_more: z.boolean().optional(),
  last_id: z.string().nullable().optional(),
});

/** Anthropic pages its list; a few pages of 1000 hold every model it has ever offered. */
const MAX_ANTHROPIC_PAGES = 5;

/**
 * Models an OpenAI-style list names that cannot hold a chat (embeddings, speech, images,
 * moderation, legacy completions); OpenAI lists them beside the chat models.
 */
const notChatModel =
  /^(text-embedding|embedding|whisper|tts-|dall-e|gpt-image|omni-moderation|text-moderation|babbage|davinci|sora)|-(realtime|audio|transcribe|tts|search-api)(-|$)/;

async function getJson(url: string, headers: Record<string, string>, provider: HostedProvider, timeoutMs: number): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs) });
  } catch (error) {
    throw upstreamError(error, provider, { operation: 'listing models' });
  }
  if (!response.ok) {
    // The body is dropped unread: a rejected key is quoted back in it.
    await response.body?.cancel();
    throw upstreamStatusError(response.status, provider, {
      operation: 'listing models',
      retryAfter: response.headers.get('retry-after') ?? undefined,
    });
  }
  try {
    return await response.json();
  } catch (error) {
    throw upstreamError(error, provider, { operation: 'listing models' });
  }
}

function parseList<T>(schema: z.ZodType<T>, body: unknown, provider: HostedProvider): T {
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    throw new AppError('MODEL_UNAVAILABLE', `${provider} answered with an unexpected model list`, { details: { provider } });
  }
  return parsed.data;
}

/**
 * The chat models a hosted provider offers to `apiKey`: OpenAI's (and compatible servers')
 * `GET {base}/models` with a Bearer token, Anthropic's `GET {base}/models` with `x-api-key`.
 * Failures are the contract's errors (upstreamError); the key appears in no error or log.
 */
export async function listHostedModelNames(
  provider: HostedProvider,
  settings: Pick<ProviderSettings, 'baseUrl'>,
  apiKey: string,
  timeoutMs: number,
): Promise<string[]> {
  if (provider === 'openai') {
    const body = await getJson(`${settings.baseUrl}/models`, { authorization: `Bearer ${apiKey}` }, provider, timeoutMs);
    return parseList(openAiModelList, body, provider)
      .data.map((model) => model.id)
      .filter((id) => !notChatModel.test(id));
  }
  const headers = { 'x-api-key': apiKey, 'anthropic-version': '2023-06-01' };
  const names: string[] = [];
  let after: string | undefined;
  for (let page = 0; page < MAX_ANTHROPIC_PAGES; page++) {
    const query = new URLSearchParams({ limit: '1000', ...(after ? { after_id: after } : {}) });
    const body = await getJson(`${settings.baseUrl}/models?${query.toString()}`, headers, provider, timeoutMs);
    const list = parseList(anthropicModelList, body, provider);
    names.push(...list.data.map((model) => model.id));
    if (!list.has_more || !list.last_id) break;
    after = list.last_id;
  }
  return names;
}
