import { createTRPCClient, httpBatchLink, httpSubscriptionLink, splitLink, type TRPCClient, type TRPCClientError } from '@trpc/client';
import superjson from 'superjson';
import type { AppRouter } from '../routers/app-router.js';

/** A token, or a function asked before each request (so a refreshed token is picked up). */
export type TokenSource = string | (() => string | undefined | Promise<string | undefined>);

export interface AssistantClientOptions {
  /** The service's base URL, e.g. `http://127.0.0.1:3000` (the client talks to `<baseUrl>/trpc`). */
  baseUrl: string;
  /** The OIDC access token when the service runs with AUTH_ENABLED=true. */
  token?: TokenSource;
  /**
   * The EventSource class subscriptions use (chat streams, events). Browsers have one; Node 20
   * does not, so pass one there (the `eventsource` package's works).
   */
  EventSource?: EventSourceClass;
  /** A fetch to use instead of the global one (for a proxy agent, say). */
  fetch?: typeof globalThis.fetch;
}

export type AssistantClient = TRPCClient<AppRouter>;

/** What a call rejects with: `data.appCode` is the contract's code, `data.httpStatus` its status. */
export type AssistantClientError = TRPCClientError<AppRouter>;

/** Any class shaped like the browser's EventSource (the constraint tRPC's subscription link takes). */
type EventSourceClass = NonNullable<Parameters<typeof httpSubscriptionLink>[0]['EventSource']>;

/**
 * The typed client for every operation of the service: queries and mutations are batched over
 * HTTP, subscriptions (`streams.follow`, `events.follow`) run over Server-Sent Events.
 *
 * ```ts
 * const client = createAssistantClient({ baseUrl: 'http://127.0.0.1:3000' });
 * const { streamId } = await client.chat.stream.mutate({ message: 'Hello' });
 * client.streams.follow.subscribe({ streamId }, { onData: ({ data }) => console.log(data) });
 * ```
 *
 * Errors are `TRPCClientError`s whose `data.appCode` is the contract's code (`NOT_FOUND`, …) and
 * `data.httpStatus` its status.
 */
export function createAssistantClient(options: AssistantClientOptions): AssistantClient {
  const url = `${options.baseUrl.replace(/\/+$/, '')}/trpc`;
  const token = async () => (typeof options.token === 'function' ? await options.token() : options.token);
  return createTRPCClient<AppRouter>({
    links: [
      splitLink({
        condition: (op) => op.type === 'subscription',
        // EventSource cannot send headers: the service reads the token from tRPC's connection
        // parameters instead (CONTRACT §5).
        true: httpSubscriptionLink({
          url,
          transformer: superjson,
          ...(options.EventSource ? { EventSource: options.EventSource } : {}),
          connectionParams: async () => {
            const current = await token();
            return current ? { token: current } : null;
          },
        }),
        false: httpBatchLink({
          url,
          transformer: superjson,
          ...(options.fetch ? { fetch: options.fetch } : {}),
          headers: async () => {
            const current = await token();
            return current ? { authorization: `Bearer ${current}` } : {};
          },
        }),
      }),
    ],
  });
}
