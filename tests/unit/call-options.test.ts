import { describe, expect, it } from 'vitest';
import { callOptionsFrom, checkCallOptions, temperatureFor } from '../../src/core/chat/chat-options.js';
import { EventSink } from '../../src/core/chat/event-sink.js';
import type { ChatEvent } from '../../src/core/chat/chat-events.js';
import { anthropicMessages } from '../../src/core/providers/anthropic-messages.js';
import { lacksOutputFormat } from '../../src/core/providers/anthropic-answer-tool.js';
import { readLogprobs } from '../../src/core/providers/call-options.js';
import type { ChatCall } from '../../src/core/providers/chat-protocol.js';

/** The body a request sends, as the provider reads it (the wire is JSON text). */
function wireJson(json: object): any {
  return JSON.parse(JSON.stringify(json));
}

// CONTRACT §12's parameter table where it is decided: which provider refuses what (by OpenAI's
// name), which Anthropic models need the forced answer tool, and what of an upstream's log
// probabilities reaches a caller.

function refusal(run: () => void): string | undefined {
  try {
    run();
  } catch (error) {
    return (error as { details?: { field?: string } }).details?.field;
  }
  return undefined;
}

describe('checkCallOptions', () => {
  const check = (provider: 'openai' | 'anthropic' | 'ollama', params: Parameters<typeof callOptionsFrom>[0], tools: string[] = ['lookup'], model = 'm') =>
    refusal(() => {
      checkCallOptions(provider, model, callOptionsFrom(params), tools);
    });

  it('refuses per provider what the table says, naming the parameter', () => {
    const named = { tool_choice: { type: 'function' as const, function: { name: 'lookup' } } };
    expect(check('openai', { seed: 1, logprobs: true, top_logprobs: 2, presence_penalty: 1, reasoning_effort: 'high', ...named, parallel_tool_calls: false })).toBeUndefined();
    expect(check('anthropic', { seed: 1 })).toBe('seed');
    expect(check('anthropic', { presence_penalty: 0.1 })).toBe('presence_penalty');
    expect(check('anthropic', { frequency_penalty: -0.1 })).toBe('frequency_penalty');
    expect(check('anthropic', { presence_penalty: 0, frequency_penalty: 0 })).toBeUndefined();
    expect(check('anthropic', { logprobs: true })).toBe('logprobs');
    expect(check('anthropic', { reasoning_effort: 'none' })).toBe('reasoning_effort');
    expect(check('anthropic', { ...named, parallel_tool_calls: false, stop: 'x', top_p: 0.5, reasoning_effort: 'minimal' })).toBeUndefined();
    expect(check('ollama', named)).toBe('tool_choice');
    expect(check('ollama', { tool_choice: 'required' })).toBe('tool_choice');
    expect(check('ollama', { parallel_tool_calls: false })).toBe('parallel_tool_calls');
    expect(check('ollama', { reasoning_effort: 'low' })).toBe('reasoning_effort');
    expect(check('ollama', { logprobs: true })).toBe('logprobs');
    expect(check('ollama', { tool_choice: 'none', parallel_tool_calls: true, logprobs: false, seed: 3, stop: ['a'] })).toBeUndefined();
  });

  it('refuses for every provider what no provider could honour', () => {
    for (const provider of ['openai', 'anthropic', 'ollama'] as const) {
      expect(check(provider, { top_logprobs: 1 })).toBe('top_logprobs');
      expect(check(provider, { tool_choice: 'required' }, [])).toBe('tool_choice');
      expect(check(provider, { tool_choice: { type: 'function', function: { name: 'absent' } } })).toBe('tool_choice');
    }
  });

  it('an old Anthropic model cannot force another tool next to the answer tool, nor share its name', () => {
    const format = { response_format: { type: 'json_schema' as const, json_schema: { name: 'lookup', schema: { type: 'object' } } } };
    expect(check('anthropic', format, ['lookup'], 'claude-3-5-haiku-20241022')).toBe('response_format');
    expect(check('anthropic', { ...format, tool_choice: 'required' }, ['other'], 'claude-sonnet-4-20250514')).toBe('response_format');
    expect(check('anthropic', { ...format, tool_choice: 'required' }, ['lookup'], 'claude-sonnet-4-5')).toBeUndefined();
  });

  it('the /api prefix names the option where it sits', () => {
    expect(
      refusal(() => {
        checkCallOptions('anthropic', 'm', callOptionsFrom({ seed: 1 }), [], 'options.');
      }),
    ).toBe('options.seed');
  });
});

describe('Anthropic specifics', () => {
  it('knows which models predate output_config.format', () => {
    for (const model of ['claude-3-5-haiku-20241022', 'claude-3-opus-20240229', 'claude-sonnet-4-20250514', 'claude-opus-4-0', 'claude-opus-4-1-20250805', 'claude-sonnet-4'])
      expect(lacksOutputFormat(model), model).toBe(true);
    for (const model of ['claude-sonnet-4-5', 'claude-sonnet-4-5-20250929', 'claude-opus-4-5', 'claude-haiku-4-5', 'claude-opus-4-6', 'claude-sonnet-5'])
      expect(lacksOutputFormat(model), model).toBe(false);
  });

  it('is sent no temperature unless asked', () => {
    expect(temperatureFor('anthropic', undefined, { DEFAULT_TEMPERATURE: 0.7 })).toBeUndefined();
    expect(temperatureFor('anthropic', 0.1, { DEFAULT_TEMPERATURE: 0.7 })).toBe(0.1);
    expect(temperatureFor('ollama', undefined, { DEFAULT_TEMPERATURE: 0.7 })).toBe(0.7);
  });

  it('reads the forced answer tool’s streamed input as the answer’s text', () => {
    const call: ChatCall = {
      model: 'claude-3-5-haiku-20241022',
      system: '',
      messages: [{ role: 'user', content: 'x' }],
      tools: [],
      temperature: undefined,
      maxTokens: undefined,
      options: { responseFormat: { type: 'json_object' } },
    };
    const text: string[] = [];
    const output: string[] = [];
    const decoder = anthropicMessages.decoder({ onText: (delta) => text.push(delta), onOutput: (piece) => output.push(piece) }, call);
    const event = (data: object) => `event: x\ndata: ${JSON.stringify(data)}\n\n`;
    decoder.push(event({ type: 'message_start', message: { usage: { input_tokens: 3 } } }));
    decoder.push(event({ type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 't', name: 'json_object', input: {} } }));
    for (const partial_json of ['', '{"a":', '1}']) decoder.push(event({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json } }));
    decoder.push(event({ type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 4 } }));
    decoder.push(event({ type: 'message_stop' }));
    expect(decoder.end()).toMatchObject({ toolCalls: [], finish: 'stop' });
    expect(text.join('')).toBe('{"a":1}');
    // The answer tool's input is counted as the text it is, not a second time as other output.
    expect(output).toEqual(['json_object']);
    expect(wireJson(anthropicMessages.request(call, 'k').json)).toMatchObject({
      tools: [{ name: 'json_object', input_schema: { type: 'object' } }],
      tool_choice: { type: 'tool', name: 'json_object' },
    });
  });
});

describe('log probabilities from upstream', () => {
  it('keep OpenAI’s fields only and drop entries that do not fit', () => {
    const hostile = [
      { token: 'ok', logprob: -1, bytes: [111, 107], top_logprobs: [{ token: 'ok', logprob: -1, bytes: null, extra: 'x' }, 'junk'], injected: '<script>' },
      { token: 5, logprob: -1 },
      { token: 'nan', logprob: 'NaN' },
      null,
      { token: 'bytes', logprob: -2, bytes: ['a'], top_logprobs: 'none' },
    ];
    expect(readLogprobs(hostile)).toEqual([
      { token: 'ok', logprob: -1, bytes: [111, 107], top_logprobs: [{ token: 'ok', logprob: -1, bytes: null }] },
      { token: 'bytes', logprob: -2, bytes: null, top_logprobs: [] },
    ]);
    expect(readLogprobs({ content: [] })).toEqual([]);
  });

  it('travel with the whole line that carries their text on the markdown streams', () => {
    const events: ChatEvent[] = [];
    const sink = new EventSink((event) => events.push(event), true);
    const token = (text: string) => ({ token: text, logprob: -1, bytes: null, top_logprobs: [] });
    sink.emit({ type: 'text', content: 'Hel', logprobs: [token('Hel')] });
    sink.emit({ type: 'text', content: 'lo\nwor', logprobs: [token('lo\nwor')] });
    sink.emit({ type: 'text', content: 'ld', logprobs: [token('ld')] });
    sink.flush();
    expect(events).toEqual([
      { type: 'text', content: 'Hello\n', logprobs: [token('Hel'), token('lo\nwor')] },
      { type: 'text', content: 'world', logprobs: [token('ld')] },
    ]);
  });
});
