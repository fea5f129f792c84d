import { z } from 'zod';
import type { ToolSpec } from '../providers/chat-protocol.js';

/** A tool the model may call: what it is offered as, and how a call of it is run. */
export interface ChatTool {
  spec: ToolSpec;
  /**
   * Validates the model's arguments against the tool's schema and runs it. Never rejects: a
   * failure is the result's `error` (and `code` for the service's own errors), which goes back to
   * the model like any result (CONTRACT §6). `signal` aborts with the generation; `callId` is
   * the model's id for the call.
   */
  run(input: unknown, signal: AbortSignal, callId?: string): Promise<unknown>;
}

// Tools are made per request (they close over the caller and the workspace) from a few fixed
// schemas: the JSON Schema of each is worked out once.
const jsonSchemas = new WeakMap<z.ZodType, Record<string, unknown>>();

function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  let json = jsonSchemas.get(schema);
  if (json === undefined) {
    // `io: 'input'`: a field with a default is optional for the model.
    const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: 'input' });
    json = rest;
    jsonSchemas.set(schema, json);
  }
  return json;
}

function describeIssues(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(arguments)'}: ${issue.message}`).join('; ');
}

export function defineTool<Schema extends z.ZodType>(
  name: string,
  description: string,
  schema: Schema,
  execute: (input: z.output<Schema>, signal: AbortSignal, callId: string | undefined) => Promise<unknown>,
): ChatTool {
  return {
    spec: { name, description, parameters: jsonSchemaOf(schema) },
    async run(input, signal, callId) {
      const parsed = schema.safeParse(input);
      if (!parsed.success) return { error: `Invalid input for tool ${name}: ${describeIssues(parsed.error)}` };
      return execute(parsed.data, signal, callId);
    },
  };
}

/** What a call's result is when the generation is aborted while the tool runs. */
export const abortedToolResult = { error: 'The answer was aborted before the tool finished', code: 'ABORTED' } as const;

/** The tool's result, or abortedToolResult as soon as `signal` aborts: an abort never waits for a tool. */
function untilAborted(work: Promise<unknown>, signal: AbortSignal): Promise<unknown> {
  if (signal.aborted) return Promise.resolve(abortedToolResult);
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      resolve(abortedToolResult);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    work
      .finally(() => {
        signal.removeEventListener('abort', onAbort);
      })
      .then(resolve, reject);
  });
}

/** A call the model sent, its arguments parsed from their JSON text (or kept as text when they are not JSON). */
export function parseToolArguments(text: string): { ok: true; value: unknown } | { ok: false; text: string } {
  if (text.trim() === '') return { ok: true, value: {} };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, text };
  }
}

/** Runs one call the model made against the tools on offer; every failure is a result. */
export async function runToolCall(
  tools: ReadonlyMap<string, ChatTool>,
  name: string,
  args: ReturnType<typeof parseToolArguments>,
  signal: AbortSignal,
  callId?: string,
): Promise<unknown> {
  const tool = tools.get(name);
  if (tool === undefined) {
    const offered = [...tools.keys()];
    return { error: `Model tried to call unavailable tool '${name}'. ${offered.length > 0 ? `Available tools: ${offered.join(', ')}.` : 'No tools are available.'}` };
  }
  if (!args.ok) return { error: `Invalid input for tool ${name}: the arguments are not valid JSON` };
  if (signal.aborted) return abortedToolResult;
  return untilAborted(tool.run(args.value, signal, callId), signal);
}
