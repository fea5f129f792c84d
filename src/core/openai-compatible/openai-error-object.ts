import type { AppError, ErrorCode } from '../errors/app-error.js';

/** OpenAI's error object, which its SDKs read (CONTRACT §2: the /v1 paths' error replies). */
export interface OpenAIErrorObject {
  error: { message: string; type: string; param: string | null; code: string | null };
}

/** OpenAI's error `type` for each of the contract's codes; the HTTP status stays the contract's. */
const errorTypes: Record<ErrorCode, string> = {
  INVALID_REQUEST: 'invalid_request_error',
  WORKSPACE_ERROR: 'invalid_request_error',
  PAYLOAD_TOO_LARGE: 'invalid_request_error',
  UNSUPPORTED_MEDIA_TYPE: 'invalid_request_error',
  UNAUTHORIZED: 'authentication_error',
  FORBIDDEN: 'permission_error',
  SECURITY_VIOLATION: 'permission_error',
  NOT_FOUND: 'not_found_error',
  RATE_LIMIT_EXCEEDED: 'rate_limit_error',
  TOOL_EXECUTION_ERROR: 'server_error',
  STREAMING_ERROR: 'server_error',
  INTERNAL_ERROR: 'server_error',
  MODEL_UNAVAILABLE: 'server_error',
  SERVICE_UNAVAILABLE: 'server_error',
};

/** The field a validation error names, dotted as OpenAI names its `param` (`messages.1.content`). */
function paramOf(details: Record<string, unknown>): string | null {
  const issues = details.issues;
  if (Array.isArray(issues)) {
    const path = (issues[0] as { path?: unknown } | undefined)?.path;
    if (Array.isArray(path) && path.length > 0) return path.map(String).join('.');
  }
  return typeof details.field === 'string' ? details.field : null;
}

/**
 * An error as OpenAI's object: `code` is the contract's code in OpenAI's lower-case spelling
 * (`invalid_request`, `rate_limit_exceeded`, `model_unavailable`), so a client can still tell
 * the contract's cases apart. The message is the contract's, which never holds a key or a stack.
 */
export function openAIErrorObject(error: Pick<AppError, 'code' | 'message' | 'details'>): OpenAIErrorObject {
  // A spent quota (CONTRACT §13) is OpenAI's own `insufficient_quota`, which its SDKs do not retry.
  if (isQuotaRefusal(error)) return { error: { message: error.message, type: 'insufficient_quota', param: null, code: 'insufficient_quota' } };
  const code = error.code === 'PAYLOAD_TOO_LARGE' ? 'INVALID_REQUEST' : error.code;
  return { error: { message: error.message, type: errorTypes[error.code], param: paramOf(error.details), code: code.toLowerCase() } };
}

/** A 429 for a spent quota (CONTRACT §13), told apart from the request-rate limits by `details.quota`. */
export function isQuotaRefusal(error: Pick<AppError, 'code' | 'details'>): boolean {
  return error.code === 'RATE_LIMIT_EXCEEDED' && error.details.quota !== undefined;
}
