import { TRPCClientError } from '@trpc/client';
import { createAssistantClient, type AssistantClient } from '../../src/client/assistant-client.js';
import type { AppRouter } from '../../src/routers/app-router.js';
import type { TokenHolder } from './auth-session.js';

export type ApiClient = AssistantClient;

/**
 * A 401 means the token lapsed before its renewal (a laptop waking up, say): renew it and send the
 * request again once with the new token. A refused request did nothing, so repeating it is safe.
 */
function renewingFetch(tokens: TokenHolder): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    if (response.status !== 401 || !(await tokens.renew()) || !tokens.token) return response;
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${tokens.token}`);
    return fetch(input, { ...init, headers });
  };
}

/**
 * The typed client for everything the page does: the package's own client (queries and mutations
 * batched over HTTP, subscriptions over SSE with the token as a connection parameter, since
 * EventSource cannot send headers), with a fetch that renews a lapsed token.
 */
export function createApiClient(tokens: TokenHolder): ApiClient {
  return createAssistantClient({ baseUrl: location.origin, token: () => tokens.token, fetch: renewingFetch(tokens) });
}

/** The contract's error code of a failed call (NOT_FOUND, SECURITY_VIOLATION, …), if it has one. */
export function appCodeOf(error: unknown): string | undefined {
  if (!(error instanceof TRPCClientError)) return undefined;
  const data = (error as TRPCClientError<AppRouter>).data as { appCode?: string } | undefined;
  return data?.appCode;
}
