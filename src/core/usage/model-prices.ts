// MODEL_PRICES (CONTRACT §13): USD per million tokens, per `provider/model` or `provider/*`.
// Example: {"openai/gpt-4o-mini":{"input":0.15,"output":0.6},"ollama/*":{"input":0,"output":0}}
import { z } from 'zod';
import type { ProviderName } from '../config/env-schema.js';

const priceSchema = z.strictObject({ input: z.number().nonnegative(), output: z.number().nonnegative() });
const pricesSchema = z.record(z.string().regex(/^(openai|anthropic|ollama)\/\S+$/, 'keys are provider/model or provider/*'), priceSchema);

/** Micro-dollars per token (USD per million tokens reads as exactly that). */
export interface TokenPrice {
  input: number;
  output: number;
}

export type ModelPrices = ReadonlyMap<string, TokenPrice>;

/** Parses the setting's JSON; throws with a message fit for a configuration error. */
export function parseModelPrices(text: string | undefined): ModelPrices {
  if (text === undefined || text.trim() === '') return new Map();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error('must be a JSON object such as {"openai/gpt-4o-mini":{"input":0.15,"output":0.6}} (USD per million tokens)');
  }
  const parsed = pricesSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'is not valid'}`.replace(/^: /, ''));
  }
  return new Map(Object.entries(parsed.data));
}

/**
 * The model's own price, else its provider's `provider/*`, else null (no price). A name and the
 * same name with `:latest` are one model, as model access takes them (model-pattern.ts): the
 * lists name Ollama's models with the tag, and a price set for `ollama/llama3.2` must hold for
 * `llama3.2:latest`, or a cost quota would be sidestepped by spelling the tag.
 */
export function priceOf(prices: ModelPrices, provider: ProviderName, model: string): TokenPrice | null {
  const untagged = model.endsWith(':latest') ? model.slice(0, -':latest'.length) : model;
  return prices.get(`${provider}/${untagged}`) ?? prices.get(`${provider}/${untagged}:latest`) ?? prices.get(`${provider}/*`) ?? null;
}

export function costMicros(price: TokenPrice | null, inputTokens: number, outputTokens: number): number | null {
  return price === null ? null : Math.ceil(inputTokens * price.input + outputTokens * price.output);
}
