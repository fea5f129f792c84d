import { describe, expect, it } from 'vitest';
import { capabilitiesFor } from '../../src/core/models/model-capabilities.js';
import { canonicalOllamaName, isValidOllamaName, parseModelReference } from '../../src/core/models/model-name.js';

describe('capabilitiesFor (name heuristic)', () => {
  it.each([
    ['openai', 'gpt-4o-mini', { tools: true, vision: true, contextWindow: 128_000 }],
    ['openai', 'gpt-4.1-nano', { tools: true, vision: true, contextWindow: 1_047_576 }],
    ['openai', 'o3-mini', { tools: true, vision: true, contextWindow: 200_000 }],
    ['openai', 'gpt-3.5-turbo', { tools: true, vision: false, contextWindow: 16_385 }],
    ['anthropic', 'claude-sonnet-4-5', { tools: true, vision: true, contextWindow: 200_000 }],
    ['anthropic', 'claude-3-5-haiku-20241022', { tools: true, vision: true, contextWindow: 200_000 }],
    ['ollama', 'llama3.2:latest', { tools: true, vision: false }],
    ['ollama', 'llama3:8b', { tools: false, vision: false }],
    ['ollama', 'llava:13b', { tools: false, vision: true }],
    ['ollama', 'llama3.2-vision:11b', { tools: true, vision: true }],
    ['ollama', 'qwen2.5vl:7b', { tools: true, vision: true }],
    ['ollama', 'qwen3:8b', { tools: true, vision: false }],
    ['ollama', 'mistral:7b', { tools: true, vision: false }],
    ['ollama', 'hf.co/bartowski/Qwen2.5-VL-7B-Instruct-GGUF:Q4_K_M', { tools: true, vision: true }],
    ['ollama', 'phi3:mini', { tools: false, vision: false }],
    // An open model served by an OpenAI-compatible server is judged by its open name.
    ['openai', 'meta-llama/Llama-3.1-8B-Instruct', { tools: true, vision: false }],
    ['openai', 'some-local-model', { tools: false, vision: false }],
  ] as const)('%s %s', (provider, name, expected) => {
    expect(capabilitiesFor(provider, name)).toEqual({ streaming: true, ...expected });
  });

  it('gpt-named Ollama models are not mistaken for hosted ones', () => {
    expect(capabilitiesFor('ollama', 'gpt-oss:20b')).toEqual({ streaming: true, tools: true, vision: false });
  });
});

describe('model names', () => {
  it('reads a `<provider>/` prefix only for known providers', () => {
    expect(parseModelReference('openai/gpt-4o')).toEqual({ provider: 'openai', name: 'gpt-4o' });
    expect(parseModelReference('ollama/hf.co/org/model:q4')).toEqual({ provider: 'ollama', name: 'hf.co/org/model:q4' });
    expect(parseModelReference('hf.co/org/model')).toEqual({ provider: undefined, name: 'hf.co/org/model' });
    expect(parseModelReference('openai/')).toEqual({ provider: undefined, name: 'openai/' });
  });

  it('an Ollama name without a tag is its `latest` tag', () => {
    expect(canonicalOllamaName('llama3.2')).toBe('llama3.2:latest');
    expect(canonicalOllamaName('llama3.2:1b')).toBe('llama3.2:1b');
    expect(canonicalOllamaName('registry.local:5000/team/model')).toBe('registry.local:5000/team/model:latest');
  });

  it.each(['llama3.2', 'llama3.2:latest', 'qwen2.5:0.5b-instruct-q4_K_M', 'hf.co/bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M', 'registry.local:5000/team/model:v1'])(
    '%s is a valid Ollama name',
    (name) => {
      expect(isValidOllamaName(name)).toBe(true);
    },
  );

  it.each(['../../etc/passwd', 'a/../b', '', ' llama', 'llama 3', 'model:', 'x:tag:more', '😀', 'a'.repeat(400), "' OR 1=1 --"])(
    '%s is not a valid Ollama name',
    (name) => {
      expect(isValidOllamaName(name)).toBe(false);
    },
  );
});
