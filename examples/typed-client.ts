// A typed client session: status, a streamed answer, the conversation list.
//
//   npm start                                  # in another shell
//   npx tsx examples/typed-client.ts "Plan the release"
//
// ASSISTANT_URL (default http://127.0.0.1:3000) names the service and ASSISTANT_TOKEN carries an
// access token when it runs with AUTH_ENABLED=true. Outside this repository, import from the
// package instead: `import { createAssistantClient } from 'assistant-service'` (installed with
// `npm install git+https://<host>/<repo>.git`, which builds it; tests/integration/typed-client-package.test.ts
// compiles and runs this file that way).
import { EventSource } from 'eventsource';
import { createAssistantClient, isTRPCClientError, type AppRouter } from '../src/index.js';

const client = createAssistantClient({
  baseUrl: process.env.ASSISTANT_URL ?? 'http://127.0.0.1:3000',
  token: () => process.env.ASSISTANT_TOKEN,
  // Node 20 has no EventSource of its own; browsers do and need no option.
  EventSource,
});

// A refusal carries the contract's code: say it plainly instead of a stack. (A rejected
// top-level await reaches Node as an uncaught exception.)
process.on('uncaughtException', (error) => {
  if (!isTRPCClientError<AppRouter>(error)) throw error;
  console.error(`[${error.data?.appCode ?? 'error'} ${error.data?.httpStatus ?? ''}] ${error.message}`);
  process.exit(1);
});

const status = await client.system.status.query({});
console.log(`service ${status.status}, version ${status.version}`);

const { streamId } = await client.chat.stream.mutate({ message: process.argv[2] ?? 'Hello', mode: 'chat' });
const done = await new Promise<{ conversationId: string; finishReason: string }>((resolve, reject) => {
  const subscription = client.streams.follow.subscribe(
    { streamId },
    {
      onData: ({ data: event }) => {
        if (event.type === 'text') process.stdout.write(event.content);
        if (event.type === 'error') console.error(`\n[${event.code}] ${event.message}`);
        if (event.type === 'done') {
          subscription.unsubscribe();
          resolve(event.metadata);
        }
      },
      onError: (error) => {
        subscription.unsubscribe();
        reject(error);
      },
    },
  );
});
console.log(`\n(${done.finishReason}, conversation ${done.conversationId})`);

const { conversations } = await client.conversations.list.query({ limit: 5, offset: 0 });
for (const conversation of conversations) console.log(`- ${conversation.title || '(untitled)'}: ${conversation.messageCount} messages`);
