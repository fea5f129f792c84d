import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors/app-error.js';
import { classifyUpstreamFailure, upstreamError } from '../../src/core/providers/upstream-error.js';

function networkError(code: string): TypeError {
  return new TypeError('fetch failed', { cause: Object.assign(new Error(`connect ${code} 127.0.0.1:9`), { code }) });
}

describe('upstreamError', () => {
  it.each([
    [400, 'INVALID_REQUEST', 400],
    [401, 'INVALID_REQUEST', 400],
    [403, 'INVALID_REQUEST', 400],
    [404, 'INVALID_REQUEST', 400],
    [422, 'INVALID_REQUEST', 400],
    [429, 'RATE_LIMIT_EXCEEDED', 429],
    [408, 'MODEL_UNAVAILABLE', 503],
    [500, 'MODEL_UNAVAILABLE', 503],
    [502, 'MODEL_UNAVAILABLE', 503],
    [503, 'MODEL_UNAVAILABLE', 503],
    [529, 'MODEL_UNAVAILABLE', 503],
  ])('maps a provider HTTP %i to %s (%i)', (status, code, httpStatus) => {
    const error = upstreamError({ statusCode: status }, 'openai');
    expect(error.code).toBe(code);
    expect(error.status).toBe(httpStatus);
    expect(error.details).toMatchObject({ provider: 'openai', status });
  });

  it("reads the AI SDK's statusCode, the ollama client's status_code and a Response's status", () => {
    expect(upstreamError({ statusCode: 401 }, 'anthropic').message).toMatch(/anthropic rejected the API key/);
    expect(upstreamError(Object.assign(new Error('model "x" not found'), { status_code: 404 }), 'ollama').code).toBe('INVALID_REQUEST');
    expect(upstreamError({ status: 503 }, 'ollama').code).toBe('MODEL_UNAVAILABLE');
  });

  it("passes the provider's Retry-After on a 429", () => {
    const error = upstreamError({ statusCode: 429, responseHeaders: { 'Retry-After': '12' } }, 'openai');
    expect(error.headers).toEqual({ 'Retry-After': '12' });
  });

  it.each(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EHOSTUNREACH', 'UND_ERR_SOCKET'])('a network failure (%s) is MODEL_UNAVAILABLE', (code) => {
    const error = upstreamError(networkError(code), 'ollama', { operation: 'listing models' });
    expect(error.code).toBe('MODEL_UNAVAILABLE');
    expect(error.message).toBe('ollama is unreachable while listing models');
  });

  it('timeouts and aborts are MODEL_UNAVAILABLE', () => {
    expect(upstreamError(new DOMException('timed out', 'TimeoutError'), 'openai').details).toMatchObject({ reason: 'timeout' });
    expect(upstreamError(new DOMException('aborted', 'AbortError'), 'openai').code).toBe('MODEL_UNAVAILABLE');
    expect(upstreamError(networkError('ETIMEDOUT'), 'openai').details).toMatchObject({ reason: 'timeout' });
    expect(upstreamError(networkError('UND_ERR_HEADERS_TIMEOUT'), 'openai').details).toMatchObject({ reason: 'timeout' });
  });

  it("looks through cause chains and the AI SDK's RetryError (lastError)", () => {
    const apiCallError = Object.assign(new Error('Cannot connect to API'), { statusCode: undefined, cause: networkError('ECONNREFUSED') });
    expect(classifyUpstreamFailure({ name: 'AI_RetryError', lastError: apiCallError })).toEqual({ kind: 'network', code: 'ECONNREFUSED' });
    expect(classifyUpstreamFailure({ name: 'AI_RetryError', lastError: { statusCode: 429 } })).toEqual({ kind: 'status', status: 429 });
    // A fetch failure with an unlisted reason is still unreachable.
    expect(classifyUpstreamFailure(new TypeError('fetch failed', { cause: { code: 'ERR_TLS_CERT_ALTNAME_INVALID' } }))).toEqual({ kind: 'network' });
  });

  it("never copies the provider's error text (which may quote the key) into the message", () => {
    const providerError = Object.assign(new Error('Incorrect API key provided: sk-secret-123'), { statusCode: 401 });
    const error = upstreamError(providerError, 'openai');
    expect(JSON.stringify(error.toEnvelope())).not.toContain('sk-secret-123');
  });

  it('an unexplained failure is MODEL_UNAVAILABLE; an AppError passes through', () => {
    expect(upstreamError(new Error('unexpected end of JSON input'), 'openai').code).toBe('MODEL_UNAVAILABLE');
    const own = AppError.invalid('already decided');
    expect(upstreamError(own, 'openai')).toBe(own);
  });
});
