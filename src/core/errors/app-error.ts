import { isDatabaseUnavailable } from '../db/database-unavailable.js';

// One error type for the whole service and one code → HTTP status table (CONTRACT §2), used by
// the tRPC error formatter, the REST adapter and the SSE/WebSocket error events alike.

export const errorStatus = {
  INVALID_REQUEST: 400,
  WORKSPACE_ERROR: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  SECURITY_VIOLATION: 403,
  NOT_FOUND: 404,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMIT_EXCEEDED: 429,
  TOOL_EXECUTION_ERROR: 500,
  STREAMING_ERROR: 500,
  INTERNAL_ERROR: 500,
  MODEL_UNAVAILABLE: 503,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof errorStatus;

/**
 * The code a client sees for an oversized or non-JSON body is INVALID_REQUEST (CONTRACT §2 gives
 * them 413 and 415); PAYLOAD_TOO_LARGE and UNSUPPORTED_MEDIA_TYPE exist only to select the status.
 */
const publicCode: Partial<Record<ErrorCode, ErrorCode>> = { PAYLOAD_TOO_LARGE: 'INVALID_REQUEST', UNSUPPORTED_MEDIA_TYPE: 'INVALID_REQUEST' };

export interface ErrorEnvelope {
  success: false;
  error: { code: ErrorCode; message: string; details: Record<string, unknown>; timestamp: string };
}

export class AppError extends Error {
  override name = 'AppError';
  readonly code: ErrorCode;
  readonly details: Record<string, unknown>;
  /** Extra response headers, such as Retry-After or WWW-Authenticate. */
  readonly headers: Record<string, string>;

  constructor(
    code: ErrorCode,
    message: string,
    options: { details?: Record<string, unknown>; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.code = code;
    this.details = options.details ?? {};
    this.headers = options.headers ?? {};
  }

  get status(): number {
    return errorStatus[this.code];
  }

  toEnvelope(now: Date = new Date()): ErrorEnvelope {
    return {
      success: false,
      error: {
        code: publicCode[this.code] ?? this.code,
        message: this.message,
        details: this.details,
        timestamp: now.toISOString(),
      },
    };
  }

  static notFound(what: string): AppError {
    return new AppError('NOT_FOUND', `${what} not found`);
  }

  static invalid(message: string, details?: Record<string, unknown>): AppError {
    return new AppError('INVALID_REQUEST', message, details ? { details } : {});
  }
}

/**
 * Any thrown value as an AppError: an unreachable database is SERVICE_UNAVAILABLE; other unknown
 * failures become INTERNAL_ERROR with a fixed message, so no internal detail reaches the client.
 */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  if (isDatabaseUnavailable(error)) {
    return new AppError('SERVICE_UNAVAILABLE', 'Database unavailable', { cause: error });
  }
  return new AppError('INTERNAL_ERROR', 'Internal server error', { cause: error });
}
