import { createTRPCClient, httpBatchLink, httpSubscriptionLink, splitLink, TRPCClientError } from '@trpc/client';
import superjson from 'superjson';
import type { AppRouter } from '../../src/routers/app-router.js';
import type { TokenHolder } from './auth-session.js';

export type ApiClient = ReturnType<typeof createTRPCClient<AppRouter>>;

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
 * The typed client for everything the page does: queries and mutations batched over HTTP,
 * subscriptions (chat streams, the event feed) over tRPC's SSE framing. EventSource cannot send
 * headers, so subscriptions carry the token as a connection parameter.
 */
export function createApiClient(tokens: TokenHolder): ApiClient {
  const url = new URL('/trpc', location.origin).href;
  return createTRPCClient<AppRouter>({
    links: [
      splitLink({
        condition: (op) => op.type === 'subscription',
        true: httpSubscriptionLink({
          url,
          transformer: superjson,
          connectionParams: () => (tokens.token ? { token: tokens.token } : {}),
        }),
        false: httpBatchLink({
          url,
          transformer: superjson,
          headers: () => (tokens.token ? { authorization: `Bearer ${tokens.token}` } : {}),
          fetch: renewingFetch(tokens),
        }),
      }),
    ],
  });
}

/** The contract's error code of a failed call (NOT_FOUND, SECURITY_VIOLATION, …), if it has one. */
export function appCodeOf(error: unknown): string | undefined {
  if (!(error instanceof TRPCClientError)) return undefined;
  const data = (error as TRPCClientError<AppRouter>).data as { appCode?: string } | undefined;
  return data?.appCode;
}
