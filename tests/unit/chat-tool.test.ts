import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it } from 'vitest';
import { z } from 'zod';
import { abortedToolResult, defineTool, parseToolArguments, runToolCall } from '../../src/core/chat/chat-tool.js';

// A generation's abort never waits for a tool, and a tool asked for after the abort never starts.

function slowTool() {
  const runs: AbortSignal[] = [];
  const tool = defineTool('slow', 'Takes its time', z.object({}), async (_input, signal) => {
    runs.push(signal);
    await sleep(5_000, undefined, { signal }).catch(() => undefined);
    return { done: true };
  });
  return { runs, tools: new Map([['slow', tool]]) };
}

it('does not start a tool once the generation is aborted', async () => {
  const { runs, tools } = slowTool();
  const controller = new AbortController();
  controller.abort();
  expect(await runToolCall(tools, 'slow', parseToolArguments('{}'), controller.signal)).toEqual(abortedToolResult);
  expect(runs).toHaveLength(0);
});

it('answers at once when the generation is aborted while the tool runs, and passes the signal on', async () => {
  const { runs, tools } = slowTool();
  const controller = new AbortController();
  const started = performance.now();
  const result = runToolCall(tools, 'slow', parseToolArguments('{}'), controller.signal);
  setTimeout(() => {
    controller.abort();
  }, 20);
  expect(await result).toEqual(abortedToolResult);
  expect(performance.now() - started).toBeLessThan(1000);
  expect(runs).toHaveLength(1);
  expect(runs[0]?.aborted).toBe(true);
});

it('gives the result of a tool that finishes first', async () => {
  const tool = defineTool('quick', 'Answers', z.object({ n: z.number() }), ({ n }) => Promise.resolve({ twice: n * 2 }));
  const result = await runToolCall(new Map([['quick', tool]]), 'quick', parseToolArguments('{"n":4}'), new AbortController().signal);
  expect(result).toEqual({ twice: 8 });
});
