import { answerSchema, type CallOptions } from './call-options.js';
import type { ChatCall } from './chat-protocol.js';

// Anthropic's structured answers (CONTRACT §12): `output_config.format` where the model has it;
// for older models a tool whose input schema is the answer's, forced, whose input is then the
// answer's text (the way Anthropic documented structured output before `output_config`).

/**
 * Models that predate `output_config.format`: Claude 3.x and Claude 4 / Opus 4.1. Structured
 * outputs are generally available from Sonnet 4.5, Opus 4.5 and Haiku 4.5 on; names this does
 * not know are taken to be newer.
 */
export function lacksOutputFormat(model: string): boolean {
  return /^claude-(instant|2|3)/.test(model) || /^claude-(opus|sonnet)-4(-[01])?(-\d{8})?$/.test(model) || /^claude-opus-4-1/.test(model);
}

/** The answer tool's name: the schema's own name, or `json_object` in JSON mode. */
function toolName(format: NonNullable<CallOptions['responseFormat']>): string {
  return format.type === 'json_schema' ? format.name : 'json_object';
}

/** The forced answer tool of a call, when it needs one (a JSON answer asked of an older model). */
export function anthropicAnswerTool(call: ChatCall): { name: string; description: string; input_schema: Record<string, unknown> } | undefined {
  const format = call.options?.responseFormat;
  if (format === undefined || format.type === 'text' || !lacksOutputFormat(call.model)) return undefined;
  const description =
    format.type === 'json_schema' && format.description !== undefined ? format.description : 'Give your whole answer as this tool’s input.';
  return { name: toolName(format), description, input_schema: answerSchema(format) };
}

/** The answer tool's name as the model would call it, for a check before the call. */
export function answerToolName(model: string, options: CallOptions | undefined): string | undefined {
  const format = options?.responseFormat;
  if (format === undefined || format.type === 'text' || !lacksOutputFormat(model)) return undefined;
  return toolName(format);
}
