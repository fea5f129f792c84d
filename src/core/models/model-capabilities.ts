import type { ProviderName } from '../config/env-schema.js';

/** CONTRACT §7's `capabilities` object. */
export interface ModelCapabilities {
  streaming: boolean;
  tools: boolean;
  vision: boolean;
  contextWindow?: number;
}

interface Family {
  match: RegExp;
  tools: boolean;
  vision: boolean;
  contextWindow?: number;
}

// A heuristic: providers do not say what a model can do in their model lists, so capabilities
// come from the model's name. Hosted families are matched first (first match wins), then the
// open-weight naming conventions, which also cover OpenAI-compatible servers (vLLM, LM Studio)
// serving open models under the openai provider. Unknown names get neither tools nor vision.
const hostedFamilies: readonly Family[] = [
  { match: /^gpt-4\.1/, tools: true, vision: true, contextWindow: 1_047_576 },
  { match: /^gpt-5/, tools: true, vision: true, contextWindow: 400_000 },
  { match: /^(gpt-4o|chatgpt-4o)/, tools: true, vision: true, contextWindow: 128_000 },
  { match: /^gpt-4-turbo/, tools: true, vision: true, contextWindow: 128_000 },
  { match: /^gpt-4(-|$)/, tools: true, vision: false, contextWindow: 8_192 },
  { match: /^gpt-3\.5/, tools: true, vision: false, contextWindow: 16_385 },
  { match: /^o1-(mini|preview)/, tools: false, vision: false, contextWindow: 128_000 },
  { match: /^o\d/, tools: true, vision: true, contextWindow: 200_000 },
  { match: /^claude-(2|instant)/, tools: false, vision: false, contextWindow: 100_000 },
  { match: /^claude-/, tools: true, vision: true, contextWindow: 200_000 },
];

/** Open-weight model names (Ollama tags, Hugging Face ids) that accept images. */
const visionNames =
  /llava|vision|[-_:.]vl\b|\bvl[-_:]|qwen2\.5vl|qwen3-vl|moondream|minicpm-v|gemma3(?!n)|llama4|mistral-small3\.[12]|pixtral/;

/** Open-weight model families trained for tool (function) calling. */
const toolNames =
  /llama-?3\.[1-9]|llama-?4|qwen-?2|qwen-?3|qwq|mistral|mixtral|ministral|devstral|magistral|command-r|firefunction|hermes-?[23]|granite-?3|granite-?4|nemotron|smollm2|deepseek-(r1|v3)|gpt-oss|phi-?4-mini|cogito|athene/;

/** The capabilities of a model, from its name (a documented heuristic; see above). */
export function capabilitiesFor(provider: ProviderName, name: string): ModelCapabilities {
  const lower = name.toLowerCase();
  if (provider !== 'ollama') {
    const family = hostedFamilies.find((candidate) => candidate.match.test(lower));
    if (family) {
      const { tools, vision, contextWindow } = family;
      return contextWindow === undefined ? { streaming: true, tools, vision } : { streaming: true, tools, vision, contextWindow };
    }
  }
  return { streaming: true, tools: toolNames.test(lower), vision: visionNames.test(lower) };
}
