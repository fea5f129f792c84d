import type { ProviderName } from '../config/env-schema.js';
import type { Config } from '../config/load-config.js';
import { AppError } from '../errors/app-error.js';
import { answerToolName } from '../providers/anthropic-answer-tool.js';
import type { CallOptions, ReasoningEffort, ResponseFormat, ToolChoice } from '../providers/call-options.js';

// OpenAI's parameters as /v1/chat/completions and the /api chat bodies' `options` take them (the
// same names on both, CONTRACT §12), turned into the engine's terms and held against what the
// chosen provider can do: a parameter that would change the answer and that the provider has no
// word for is a 400 naming it, never dropped.

/** The parameters as the request schemas give them (OpenAI's names; null is "not given", as SDKs send it). */
export interface OpenAIParameters {
  response_format?:
    | { type: 'text' }
    | { type: 'json_object' }
    | { type: 'json_schema'; json_schema: { name: string; description?: string | undefined; schema?: Record<string, unknown> | undefined; strict?: boolean | null | undefined } }
    | null
    | undefined;
  tool_choice?: 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } } | null | undefined;
  parallel_tool_calls?: boolean | null | undefined;
  stop?: string | string[] | null | undefined;
  top_p?: number | null | undefined;
  seed?: number | null | undefined;
  presence_penalty?: number | null | undefined;
  frequency_penalty?: number | null | undefined;
  reasoning_effort?: ReasoningEffort | null | undefined;
  logprobs?: boolean | null | undefined;
  top_logprobs?: number | null | undefined;
}

function responseFormatOf(format: NonNullable<OpenAIParameters['response_format']>): ResponseFormat {
  if (format.type !== 'json_schema') return { type: format.type };
  return { type: 'json_schema', ...format.json_schema };
}

function toolChoiceOf(choice: NonNullable<OpenAIParameters['tool_choice']>): ToolChoice {
  return typeof choice === 'string' ? choice : { name: choice.function.name };
}

export function callOptionsFrom(params: OpenAIParameters): CallOptions {
  const stop = params.stop ?? undefined;
  return {
    responseFormat: params.response_format ? responseFormatOf(params.response_format) : undefined,
    toolChoice: params.tool_choice ? toolChoiceOf(params.tool_choice) : undefined,
    parallelToolCalls: params.parallel_tool_calls ?? undefined,
    stop: typeof stop === 'string' ? [stop] : stop,
    topP: params.top_p ?? undefined,
    seed: params.seed ?? undefined,
    presencePenalty: params.presence_penalty ?? undefined,
    frequencyPenalty: params.frequency_penalty ?? undefined,
    reasoningEffort: params.reasoning_effort ?? undefined,
    logprobs: params.logprobs ?? undefined,
    topLogprobs: params.top_logprobs ?? undefined,
  };
}

const forcing = (choice: ToolChoice | undefined) => choice === 'required' || typeof choice === 'object';

/**
 * The first parameter `provider` cannot honour, by OpenAI's name (the table of CONTRACT §12), or
 * undefined. A penalty of 0 is OpenAI's default and changes nothing, so it is no refusal.
 */
function refusedParameter(provider: ProviderName, model: string, options: CallOptions, toolNames: readonly string[]): string | undefined {
  const asksLogprobs = options.logprobs === true || options.topLogprobs !== undefined;
  switch (provider) {
    case 'openai':
      return undefined;
    case 'anthropic': {
      if (options.seed !== undefined) return 'seed';
      if (options.presencePenalty !== undefined && options.presencePenalty !== 0) return 'presence_penalty';
      if (options.frequencyPenalty !== undefined && options.frequencyPenalty !== 0) return 'frequency_penalty';
      if (asksLogprobs) return options.logprobs === true ? 'logprobs' : 'top_logprobs';
      if (options.reasoningEffort === 'none') return 'reasoning_effort';
      // A forced answer tool leaves no room for forcing another tool, nor may it share a name.
      const answerTool = answerToolName(model, options);
      if (answerTool !== undefined && (forcing(options.toolChoice) || toolNames.includes(answerTool))) return 'response_format';
      return undefined;
    }
    case 'ollama':
      if (forcing(options.toolChoice)) return 'tool_choice';
      if (options.parallelToolCalls === false) return 'parallel_tool_calls';
      if (options.reasoningEffort !== undefined) return 'reasoning_effort';
      if (asksLogprobs) return options.logprobs === true ? 'logprobs' : 'top_logprobs';
      return undefined;
  }
}

/**
 * Refuses what the provider cannot do, and what no provider can: `top_logprobs` without
 * `logprobs`, a tool choice that forces a tool when none is offered or names one that is not.
 * `paramPrefix` is where the parameters sit in the body ('' on /v1, 'options.' on /api).
 */
export function checkCallOptions(
  provider: ProviderName,
  model: string,
  options: CallOptions,
  toolNames: readonly string[],
  paramPrefix = '',
): void {
  const refuse = (param: string, message: string) => AppError.invalid(`${paramPrefix}${param}: ${message}`, { field: `${paramPrefix}${param}` });
  if (options.topLogprobs !== undefined && options.logprobs !== true) throw refuse('top_logprobs', 'needs logprobs: true');
  const choice = options.toolChoice;
  if (forcing(choice) && toolNames.length === 0) throw refuse('tool_choice', 'forces a tool call, but no tools are given');
  if (typeof choice === 'object' && !toolNames.includes(choice.name)) throw refuse('tool_choice', `names no given tool: ${choice.name}`);
  const refused = refusedParameter(provider, model, options, toolNames);
  if (refused !== undefined) throw refuse(refused, `not supported by ${provider} (model ${model})`);
}

/**
 * The temperature sent: the caller's, else DEFAULT_TEMPERATURE, except that Anthropic is sent
 * none unless asked (CONTRACT §12): its newer models refuse temperature next to top_p, and its
 * own default is what its models are tuned for.
 */
export function temperatureFor(provider: ProviderName, asked: number | undefined, config: Pick<Config, 'DEFAULT_TEMPERATURE'>): number | undefined {
  if (asked !== undefined) return asked;
  return provider === 'anthropic' ? undefined : config.DEFAULT_TEMPERATURE;
}
