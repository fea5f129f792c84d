import { describe, expect, it } from 'vitest';
import { anthropicMessages, defaultAnthropicMaxTokens } from '../../src/core/providers/anthropic-messages.js';
import type { ChatCall, StepResult, WireProtocol } from '../../src/core/providers/chat-protocol.js';
import { ollamaChat } from '../../src/core/providers/ollama-chat.js';
import { openAIChat } from '../../src/core/providers/openai-chat.js';
import { ProviderProtocolError, ProviderStreamError } from '../../src/core/providers/provider-errors.js';

/** The body a request sends, as the provider reads it (the wire is JSON text). */
function wireJson(json: object): any {
  return JSON.parse(JSON.stringify(json));
}

// The three wire clients' two halves: the request each provider is sent, and the decoding of its
// streamed answer however the network splits it. (Integration tests run them against the fakes.)

/** `output`: every piece of other output the decoder reported (held to the output cap, output-cap.ts). */
function decode(protocol: WireProtocol, pieces: string[]): { text: string[]; output: string[]; result: StepResult } {
  const text: string[] = [];
  const output: string[] = [];
  const decoder = protocol.decoder({ onText: (delta) => text.push(delta), onOutput: (piece) => output.push(piece) });
  for (const piece of pieces) decoder.push(piece);
  return { text, output, result: decoder.end() };
}

/** The body cut into pieces of `size` characters (1 exercises every boundary). */
function split(body: string, size: number): string[] {
  const pieces: string[] = [];
  for (let at = 0; at < body.length; at += size) pieces.push(body.slice(at, at + size));
  return pieces;
}

/** The result without the ids a decoder makes up (Ollama sends none), which differ per decoding. */
function comparable({ toolCalls, ...rest }: StepResult) {
  return { ...rest, toolCalls: toolCalls.map(({ name, argumentsText }) => ({ name, argumentsText })) };
}

function decodeEveryWay(protocol: WireProtocol, body: string) {
  const whole = decode(protocol, [body]);
  for (const size of [1, 2, 3, 7, 64]) {
    const pieces = decode(protocol, split(body, size));
    expect(pieces.text.join('')).toBe(whole.text.join(''));
    expect(pieces.output.join('')).toBe(whole.output.join(''));
    expect(comparable(pieces.result)).toEqual(comparable(whole.result));
  }
  return whole;
}

const sse = (value: unknown, event?: string) => `${event === undefined ? '' : `event: ${event}\n`}data: ${JSON.stringify(value)}\n\n`;

const call: ChatCall = {
  model: 'm',
  system: 'Be brief.',
  messages: [
    { role: 'user', content: 'list' },
    { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'list_files', input: { path: '.' } }] },
    { role: 'tool', results: [{ id: 'c1', name: 'list_files', output: { entries: ['a'] } }] },
    { role: 'assistant', content: 'One file.', toolCalls: [] },
    { role: 'user', content: 'thanks' },
  ],
  tools: [{ name: 'list_files', description: 'List', parameters: { type: 'object', properties: {} } }],
  temperature: 0.2,
  maxTokens: undefined,
};

describe('OpenAI Chat Completions', () => {
  const chunk = (delta: object, finish: string | null = null, usage: unknown = null) =>
    sse({ id: 'x', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }], usage });
  const body =
    chunk({ role: 'assistant', content: '' }) +
    chunk({ content: 'Hé' }) +
    chunk({ content: 'llo 👋' }) +
    chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '' } }] }) +
    chunk({ tool_calls: [{ index: 0, function: { arguments: '{"pa' } }] }) +
    chunk({ tool_calls: [{ index: 0, function: { arguments: 'th":"a"}' } }] }) +
    chunk({ tool_calls: [{ index: 1, id: 'call_2', type: 'function', function: { name: 'git_status', arguments: '{}' } }] }) +
    chunk({}, 'tool_calls') +
    sse({ id: 'x', choices: [], usage: { prompt_tokens: 12, completion_tokens: 5 } }) +
    'data: [DONE]\n\n';

  it('decodes text, tool calls assembled from fragments, finish and usage, however the body is split', () => {
    const { text, output, result } = decodeEveryWay(openAIChat, body);
    expect(text.join('')).toBe('Héllo 👋');
    // Each name and argument fragment is reported as it arrives, for the output cap.
    expect(output).toEqual(['read_file', '{"pa', 'th":"a"}', 'git_status', '{}']);
    expect(result).toEqual({
      toolCalls: [
        { id: 'call_1', name: 'read_file', argumentsText: '{"path":"a"}' },
        { id: 'call_2', name: 'git_status', argumentsText: '{}' },
      ],
      finish: 'tool-calls',
      usage: { inputTokens: 12, outputTokens: 5 },
    });
  });

  it('reports every other output it streams, shown or not: reasoning (once under either name), refusals, nameless and legacy calls, other choices', () => {
    const streamed =
      chunk({ role: 'assistant', reasoning_content: 'Think' }) +
      chunk({ reasoning: 'ing' }) +
      chunk({ reasoning_content: 'both', reasoning: 'both' }) +
      chunk({ refusal: 'No.' }) +
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"nameless":1}' } }] }) +
      chunk({ function_call: { name: 'old', arguments: '{}' } }) +
      sse({ id: 'x', choices: [{ index: 0, delta: {} }, { index: 1, delta: { content: 'second', tool_calls: [{ index: 0, function: { name: 'n', arguments: '{}' } }] } }] }) +
      chunk({ content: 'ok' }) +
      chunk({}, 'stop') +
      'data: [DONE]\n\n';
    const { text, output, result } = decodeEveryWay(openAIChat, streamed);
    expect(text).toEqual(['ok']);
    expect(output).toEqual(['Think', 'ing', 'both', 'No.', '{"nameless":1}', 'old', '{}', 'second', 'n', '{}']);
    // Counted, never kept: a call without a name is still dropped.
    expect(result.toolCalls).toEqual([]);
  });

  it('reads CRLF line endings and SSE comments', () => {
    const crlf = `: keep-alive\r\n\r\n${chunk({ content: 'hi' }).replace(/\n/g, '\r\n')}${chunk({}, 'length').replace(/\n/g, '\r\n')}`;
    const { text, result } = decodeEveryWay(openAIChat, crlf);
    expect(text).toEqual(['hi']);
    expect(result.finish).toBe('length');
  });

  it('refuses a stream that ends early, one that is not JSON, and reports an error chunk', () => {
    expect(() => decode(openAIChat, [chunk({ content: 'partial' })])).toThrow(expect.objectContaining({ reason: 'cut' }));
    expect(() => decode(openAIChat, ['data: {"choices":[{"delta":{"content":"He\n\n'])).toThrow(ProviderProtocolError);
    expect(() => decode(openAIChat, [sse({ error: { message: 'boom', type: 'server_error' } })])).toThrow(expect.objectContaining({ status: 500 }));
  });

  it('sends the system prompt first, calls and their results paired, tools and usage asked for', () => {
    const wire = openAIChat.request(call, 'sk-1');
    expect(wire.path).toBe('/chat/completions');
    expect(wire.headers.authorization).toBe('Bearer sk-1');
    const sent = wireJson(wire.json);
    expect(sent).toMatchObject({ model: 'm', stream: true, stream_options: { include_usage: true }, temperature: 0.2 });
    expect(sent.max_tokens).toBeUndefined();
    expect(sent.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'list' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'list_files', arguments: '{"path":"."}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: '{"entries":["a"]}' },
      { role: 'assistant', content: 'One file.' },
      { role: 'user', content: 'thanks' },
    ]);
    expect(sent.tools).toEqual([{ type: 'function', function: { name: 'list_files', description: 'List', parameters: { type: 'object', properties: {} } } }]);
  });

  it('gives reasoning models no temperature and max_completion_tokens instead of max_tokens', () => {
    const sent = wireJson(openAIChat.request({ ...call, model: 'o3-mini', maxTokens: 99 }, 'k').json);
    expect(sent.temperature).toBeUndefined();
    expect(sent).toMatchObject({ max_completion_tokens: 99 });
    expect(wireJson(openAIChat.request({ ...call, model: 'gpt-4o', maxTokens: 99 }, 'k').json)).toMatchObject({ max_tokens: 99, temperature: 0.2 });
  });
});

describe('Anthropic Messages', () => {
  const body =
    sse({ type: 'message_start', message: { id: 'm', usage: { input_tokens: 20, cache_read_input_tokens: 5, output_tokens: 1 } } }, 'message_start') +
    sse({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, 'content_block_start') +
    sse({ type: 'ping' }, 'ping') +
    sse({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Let me look' } }, 'content_block_delta') +
    sse({ type: 'content_block_stop', index: 0 }, 'content_block_stop') +
    sse({ type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: {} } }, 'content_block_start') +
    sse({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '' } }, 'content_block_delta') +
    sse({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"path":' } }, 'content_block_delta') +
    sse({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '"a"}' } }, 'content_block_delta') +
    sse({ type: 'content_block_stop', index: 1 }, 'content_block_stop') +
    sse({ type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'toolu_2', name: 'git_status', input: {} } }, 'content_block_start') +
    sse({ type: 'content_block_stop', index: 2 }, 'content_block_stop') +
    sse({ type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 30 } }, 'message_delta') +
    sse({ type: 'message_stop' }, 'message_stop');

  it('decodes text, tool_use blocks (an empty input is {}), the stop reason and all input tokens', () => {
    const { text, output, result } = decodeEveryWay(anthropicMessages, body);
    expect(text).toEqual(['Let me look']);
    // Each tool's name and input fragment is reported as it arrives, for the output cap.
    expect(output).toEqual(['read_file', '{"path":', '"a"}', 'git_status']);
    expect(result).toEqual({
      toolCalls: [
        { id: 'toolu_1', name: 'read_file', argumentsText: '{"path":"a"}' },
        { id: 'toolu_2', name: 'git_status', argumentsText: '{}' },
      ],
      finish: 'tool-calls',
      usage: { inputTokens: 25, outputTokens: 30 },
    });
  });

  it('reports thinking, its signature and deltas of kinds it does not know as output, never as text', () => {
    const streamed =
      sse({ type: 'message_start', message: { id: 'm', usage: { input_tokens: 2, output_tokens: 1 } } }, 'message_start') +
      sse({ type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }, 'content_block_start') +
      sse({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Hmm' } }, 'content_block_delta') +
      sse({ type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'c2ln' } }, 'content_block_delta') +
      sse({ type: 'content_block_delta', index: 0, delta: { type: 'future_delta', stuff: 'x' } }, 'content_block_delta') +
      sse({ type: 'content_block_stop', index: 0 }, 'content_block_stop') +
      sse({ type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } }, 'content_block_start') +
      sse({ type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Done' } }, 'content_block_delta') +
      sse({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 9 } }, 'message_delta') +
      sse({ type: 'message_stop' }, 'message_stop');
    const { text, output, result } = decodeEveryWay(anthropicMessages, streamed);
    expect(text).toEqual(['Done']);
    expect(output).toEqual(['Hmm', 'c2ln', '{"type":"future_delta","stuff":"x"}']);
    expect(result).toMatchObject({ toolCalls: [], finish: 'stop' });
  });

  it('refuses a stream without message_stop and reports each error type as the status it has before a stream', () => {
    expect(() => decode(anthropicMessages, [body.slice(0, body.indexOf('event: message_stop'))])).toThrow(expect.objectContaining({ reason: 'cut' }));
    const errorEvent = (type: string) => sse({ type: 'error', error: { type, message: 'no' } }, 'error');
    expect(() => decode(anthropicMessages, [errorEvent('overloaded_error')])).toThrow(ProviderStreamError);
    const statuses = {
      invalid_request_error: 400,
      authentication_error: 401,
      permission_error: 403,
      not_found_error: 404,
      rate_limit_error: 429,
      api_error: 500,
      overloaded_error: 529,
      an_error_type_from_the_future: 500,
    };
    for (const [type, status] of Object.entries(statuses)) {
      expect(() => decode(anthropicMessages, [errorEvent(type)]), type).toThrow(expect.objectContaining({ status }));
    }
  });

  it('starts at the first question when the history window opens with an answer or its tool calls', () => {
    const sent = wireJson(
      anthropicMessages.request({ ...call, messages: call.messages.slice(1) }, 'k').json,
    ) as { messages: { role: string }[] };
    expect(sent.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'thanks' }] }]);
    const onlyAnswers = wireJson(anthropicMessages.request({ ...call, messages: call.messages.slice(1, 4) }, 'k').json) as { messages: unknown[] };
    expect(onlyAnswers.messages).toEqual([]);
  });

  it('sends the system prompt apart, tool results as user turns, and a max_tokens the model accepts', () => {
    const wire = anthropicMessages.request(call, 'sk-ant');
    expect(wire.headers).toMatchObject({ 'x-api-key': 'sk-ant', 'anthropic-version': '2023-06-01' });
    const sent = wireJson(wire.json);
    expect(sent).toMatchObject({ model: 'm', system: 'Be brief.', stream: true, temperature: 0.2, max_tokens: 16_384 });
    expect(sent.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'list' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'list_files', input: { path: '.' } }] },
      // The tool result and the next user message are one user turn: turns must alternate.
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: '{"entries":["a"]}' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'One file.' }] },
      { role: 'user', content: [{ type: 'text', text: 'thanks' }] },
    ]);
    expect(sent.tools).toEqual([{ name: 'list_files', description: 'List', input_schema: { type: 'object', properties: {} } }]);
    expect(defaultAnthropicMaxTokens('claude-3-haiku-20240307')).toBe(4096);
    expect(defaultAnthropicMaxTokens('claude-3-5-sonnet-latest')).toBe(8192);
    expect(wireJson(anthropicMessages.request({ ...call, maxTokens: 50 }, 'k').json).max_tokens).toBe(50);
  });

  it('merges consecutive turns of one role and leaves out empty ones', () => {
    const sent = wireJson(
      anthropicMessages.request(
        {
          ...call,
          messages: [
            { role: 'user', content: 'a' },
            { role: 'user', content: 'b' },
            { role: 'assistant', content: '', toolCalls: [] },
            { role: 'user', content: 'c' },
          ],
        },
        'k',
      ).json,
    );
    expect(sent.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
          { type: 'text', text: 'c' },
        ],
      },
    ]);
  });
});

describe('Ollama chat', () => {
  const line = (value: object) => `${JSON.stringify({ model: 'm', created_at: '2026-01-01T00:00:00Z', ...value })}\n`;
  const body =
    line({ message: { role: 'assistant', content: 'Checking' }, done: false }) +
    line({ message: { role: 'assistant', content: '', tool_calls: [{ function: { name: 'read_file', arguments: { path: 'a' } } }] }, done: false }) +
    line({ message: { role: 'assistant', content: '' }, done: true, done_reason: 'stop', prompt_eval_count: 8, eval_count: 4 });

  it('decodes text, tool calls (given ids, arguments as JSON text) and the done line', () => {
    const { text, output, result } = decodeEveryWay(ollamaChat, body);
    expect(text).toEqual(['Checking']);
    // A whole call is reported by its name and its arguments' JSON, for the output cap.
    expect(output).toEqual(['read_file', '{"path":"a"}']);
    expect(result.toolCalls).toEqual([{ id: expect.stringMatching(/^call_/), name: 'read_file', argumentsText: '{"path":"a"}' }]);
    expect(result.usage).toEqual({ inputTokens: 8, outputTokens: 4 });
  });

  it('reports a thinking model’s reasoning and a nameless call’s arguments as output, never as text nor a call', () => {
    const streamed =
      line({ message: { role: 'assistant', content: '', thinking: 'Let me think' }, done: false }) +
      line({ message: { role: 'assistant', content: '', tool_calls: [{ function: { arguments: { junk: true } } }] }, done: false }) +
      line({ message: { role: 'assistant', content: 'Fine' }, done: false }) +
      line({ message: { role: 'assistant', content: '' }, done: true, done_reason: 'stop', prompt_eval_count: 3, eval_count: 9 });
    const { text, output, result } = decodeEveryWay(ollamaChat, streamed);
    expect(text).toEqual(['Fine']);
    expect(output).toEqual(['Let me think', '{"junk":true}']);
    expect(result.toolCalls).toEqual([]);
  });

  it('reads a last line without its newline, refuses a stream without done, reports an error line', () => {
    expect(decode(ollamaChat, [body.trimEnd()]).result.usage.outputTokens).toBe(4);
    expect(() => decode(ollamaChat, [line({ message: { content: 'x' }, done: false })])).toThrow(expect.objectContaining({ reason: 'cut' }));
    expect(() => decode(ollamaChat, ['{"model":\n'])).toThrow(expect.objectContaining({ reason: 'malformed' }));
    expect(() => decode(ollamaChat, [line({ error: 'model crashed' })])).toThrow(ProviderStreamError);
  });

  it('puts temperature and the token limit in options, and tool arguments as objects', () => {
    const wire = ollamaChat.request({ ...call, maxTokens: 64 }, undefined);
    expect(wire.path).toBe('/api/chat');
    const sent = wireJson(wire.json);
    expect(sent.options).toEqual({ temperature: 0.2, num_predict: 64 });
    expect(sent.messages[2]).toEqual({ role: 'assistant', content: '', tool_calls: [{ function: { name: 'list_files', arguments: { path: '.' } } }] });
    expect(sent.messages[3]).toEqual({ role: 'tool', tool_name: 'list_files', content: '{"entries":["a"]}' });
  });
});
