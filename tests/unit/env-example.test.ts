import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { envSchema } from '../../src/core/config/env-schema.js';
import { loadConfig } from '../../src/core/config/load-config.js';

// .env.example is where a new user finds every setting (issue 22): it must list each variable the
// service reads and each of CONTRACT §1's table, with its default, and nothing else.

const repo = new URL('../..', import.meta.url);
const example = readFileSync(new URL('.env.example', repo), 'utf8');

/** `# NAME=value` lines: every setting is listed commented out, with its default. */
const listed = new Map([...example.matchAll(/^# ([A-Z][A-Z0-9_]*)=(.*)$/gm)].map((match) => [match[1] ?? '', match[2] ?? '']));

/** The variable names of CONTRACT §1's table (`PORT / HOST`, `RATE_LIMIT_CHAT/MODELS/…` spelled out). */
function contractVariables(): string[] {
  const contract = readFileSync(new URL('docs/CONTRACT.md', repo), 'utf8');
  const section = contract.slice(contract.indexOf('## 1.'), contract.indexOf('## 2.'));
  const names: string[] = [];
  for (const row of section.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| variable'))) {
    const cell = row.split('|')[1] ?? '';
    for (const group of cell.split(/[\s,]+/).filter((part) => /^[A-Z]/.test(part))) {
      const [first = '', ...rest] = group.split('/');
      names.push(first);
      // RATE_LIMIT_CHAT/MODELS: the later parts share the first one's prefix.
      for (const part of rest) names.push(part.includes('_') ? part : first.slice(0, first.lastIndexOf('_') + 1) + part);
    }
  }
  return names;
}

describe('.env.example', () => {
  it('lists every variable of the configuration schema and of CONTRACT §1, and only those', () => {
    const expected = new Set([...Object.keys(envSchema.shape), ...contractVariables()]);
    expect(contractVariables()).toEqual(expect.arrayContaining(['PORT', 'HOST', 'RATE_LIMIT_WORKSPACE', 'LOG_FORMAT', 'BODY_LIMIT']));
    expect([...listed.keys()].sort()).toEqual([...expected].sort());
  });

  it('gives each setting a comment line above it', () => {
    const lines = example.split('\n');
    lines.forEach((line, index) => {
      if (!/^# [A-Z][A-Z0-9_]*=/.test(line)) return;
      expect(lines[index - 1], `the line above ${line}`).toMatch(/^# (?![A-Z][A-Z0-9_]*=)\S/);
    });
  });

  it('shows the defaults the service uses: copied whole and uncommented, it changes nothing', () => {
    const uncommented = Object.fromEntries([...listed].filter(([name]) => name in envSchema.shape));
    // LOG_FORMAT's real default depends on the terminal; json is what it is off one.
    const asListed = loadConfig(uncommented, null);
    const asDefaults = loadConfig({}, null);
    // The providers' base URLs are listed as the addresses they default to: the same in effect.
    const raw = ['OPENAI_BASE_URL', 'ANTHROPIC_BASE_URL', 'OLLAMA_BASE_URL'];
    const effective = (config: Record<string, unknown>) => Object.fromEntries(Object.entries(config).filter(([name]) => !raw.includes(name)));
    expect(effective(asListed)).toEqual(effective({ ...asDefaults, LOG_FORMAT: 'json' }));
    expect(asListed.providers).toEqual(asDefaults.providers);
  });
});
