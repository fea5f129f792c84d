import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config/load-config.js';
import { AppError } from '../../src/core/errors/app-error.js';
import { checkOllamaRegistry, parseRegistryAllowList, registryOf } from '../../src/core/models/ollama-registry.js';

// Ollama reads `[host/][namespace/]model[:tag]` (its types/model/name.go): with three segments the
// first is a host whatever it looks like; with two, a first segment that cannot be a namespace (a
// `.`, a `:`, anything but letters, digits, `_` and `-`) or `localhost` is read as a host by older
// Ollama and by Docker's rule. Each spelling an attacker could reach for is in the table.

function refusal(name: string, allowed: readonly string[] = []): AppError | null {
  try {
    checkOllamaRegistry(name, allowed);
    return null;
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
}

describe('the registry an Ollama model name names', () => {
  const ownRegistry = [
    'llama3.2',
    'llama3.2:latest',
    'qwen2.5:7b-instruct-q4_K_M',
    'library/llama3',
    'library/llama3:8b',
    'some_user/my-model:v1.2',
    'registry.ollama.ai/library/llama3',
    'REGISTRY.OLLAMA.AI/library/llama3:8b',
    // One segment: `host:5000` alone is the model `host` with the tag `5000`, no registry.
    'evil.example:5000',
  ];
  for (const name of ownRegistry) {
    it(`${name} → Ollama's own registry`, () => {
      expect(registryOf(name)).toEqual({ kind: 'default' });
      expect(refusal(name)).toBeNull();
    });
  }

  const otherHosts: [string, string][] = [
    ['evil.example/library/x', 'evil.example'],
    ['evil.example/x', 'evil.example'],
    ['evil.example:5000/x', 'evil.example:5000'],
    ['evil.example:5000/library/x:latest', 'evil.example:5000'],
    ['EVIL.Example/library/x', 'evil.example'],
    ['localhost/x', 'localhost'],
    ['LOCALHOST/x', 'localhost'],
    ['localhost:11434/x', 'localhost:11434'],
    ['127.0.0.1:8080/library/x', '127.0.0.1:8080'],
    ['[::1]:5000/library/x', '[::1]:5000'],
    // Three segments: Ollama takes the first as the host however plain it looks.
    ['evil/library/x', 'evil'],
    ['intranet-box/ns/model:tag', 'intranet-box'],
    // Four: everything before namespace/model is the host Ollama would try.
    ['a/b/c/d', 'a/b'],
    ['hf.co/bartowski/Llama-3.2-1B-Instruct-GGUF', 'hf.co'],
    ['évil.example/x', 'évil.example'],
    ['xn--vil-bma.example/library/x', 'xn--vil-bma.example'],
    ['evil。example/x', 'evil。example'],
    ['evil.example\\library\\x', 'evil.example'],
    [' evil.example/library/x', ' evil.example'],
    ['registry.ollama.ai:443/library/x', 'registry.ollama.ai:443'],
    ['registry.ollama.ai.evil.example/library/x', 'registry.ollama.ai.evil.example'],
  ];
  for (const [name, host] of otherHosts) {
    it(`${name} names the host ${host}: refused naming the model and OLLAMA_ALLOWED_REGISTRIES`, () => {
      expect(registryOf(name)).toEqual({ kind: 'host', host });
      const error = refusal(name);
      expect(error?.code).toBe('INVALID_REQUEST');
      expect(error?.status).toBe(400);
      expect(error?.message).toContain(name);
      expect(error?.message).toContain('OLLAMA_ALLOWED_REGISTRIES');
      expect(error?.details).toMatchObject({ modelName: name, registry: host, variable: 'OLLAMA_ALLOWED_REGISTRIES' });
    });
  }

  for (const name of ['http://evil/x', 'https://evil.example/library/x', 'HTTP://registry.ollama.ai/library/x', 'scheme://host:port/namespace/model:tag']) {
    it(`${name} carries a URL scheme: refused even when its host is listed`, () => {
      const host = registryOf(name);
      expect(host.kind).toBe('scheme');
      expect(refusal(name)?.message).toContain('OLLAMA_ALLOWED_REGISTRIES');
      expect(refusal(name, [host.kind === 'scheme' ? host.host : ''])?.code).toBe('INVALID_REQUEST');
    });
  }

  it('a listed host is allowed, case-insensitively and with its port exactly', () => {
    const allowed = parseRegistryAllowList(['Registry.Example:5000', 'hf.co']);
    expect(allowed).toEqual(['registry.example:5000', 'hf.co']);
    expect(refusal('registry.example:5000/library/x', allowed)).toBeNull();
    expect(refusal('REGISTRY.example:5000/x:7b', allowed)).toBeNull();
    expect(refusal('hf.co/bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M', allowed)).toBeNull();
    // Another port, no port, or a longer name ending the same way are other hosts.
    expect(refusal('registry.example/library/x', allowed)?.code).toBe('INVALID_REQUEST');
    expect(refusal('registry.example:5001/library/x', allowed)?.code).toBe('INVALID_REQUEST');
    expect(refusal('evil.hf.co/library/x', allowed)?.code).toBe('INVALID_REQUEST');
    expect(refusal('hf.co.evil.example/library/x', allowed)?.code).toBe('INVALID_REQUEST');
  });
});

describe('OLLAMA_ALLOWED_REGISTRIES', () => {
  it('is empty by default: only the default registry', () => {
    expect(loadConfig({}, null).OLLAMA_ALLOWED_REGISTRIES).toEqual([]);
  });

  it('reads a comma list of hosts, lower-cased', () => {
    expect(loadConfig({ OLLAMA_ALLOWED_REGISTRIES: ' hf.co , Registry.Internal:5000 ' }, null).OLLAMA_ALLOWED_REGISTRIES).toEqual([
      'hf.co',
      'registry.internal:5000',
    ]);
  });

  for (const bad of ['https://hf.co', 'hf.co/library', 'évil.example', '*.example', 'host:port', 'a b']) {
    it(`refuses the entry ${JSON.stringify(bad)} at start, naming the variable`, () => {
      expect(() => loadConfig({ OLLAMA_ALLOWED_REGISTRIES: bad }, null)).toThrow(/OLLAMA_ALLOWED_REGISTRIES/);
    });
  }
});
