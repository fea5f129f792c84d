// The concurrent-streams benchmark's upstream, in a process of its own: an OpenAI Chat Completions
// server whose streamed answers are slow, one text chunk every 100–250 ms (uniformly drawn per
// chunk). The fake of tests/fakes plays scripted texts at one fixed delay; this benchmark needs
// each chunk to say when it left, so every chunk's text is `<index>@<epoch ms> `, the time taken
// (`performance.timeOrigin + performance.now()`, comparable across processes on one machine) just
// before the write. The load generator then knows, per event, the gap the upstream emitted and how
// late the event reached it.
//
// The wire format is the streamed Chat Completions one: a role-only first chunk, content chunks,
// a chunk with finish_reason, a usage chunk when `stream_options.include_usage` asks for it, then
// `data: [DONE]`. How many text chunks: `chunks=<n>` in the last message, else STREAM_CHUNKS.
// Prints `{"url": ...}` (the base URL, ending in /v1) once listening; stops on SIGTERM.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const MIN_GAP_MS = 100;
const MAX_GAP_MS = 250;
const defaultChunks = Number(process.env.STREAM_CHUNKS ?? 80);

const now = () => performance.timeOrigin + performance.now();

interface CompletionsRequest {
  model?: unknown;
  messages?: { content?: unknown }[];
  stream_options?: { include_usage?: unknown };
}

async function readBody(req: IncomingMessage): Promise<string> {
  let body = '';
  req.setEncoding('utf8');
  for await (const piece of req) body += piece as string;
  return body;
}

function chunkCount(request: CompletionsRequest): number {
  const last = request.messages?.at(-1)?.content;
  const asked = typeof last === 'string' ? /chunks=(\d+)/.exec(last)?.[1] : undefined;
  return asked === undefined ? defaultChunks : Number(asked);
}

let served = 0;

function streamAnswer(res: ServerResponse, request: CompletionsRequest): void {
  const chunks = chunkCount(request);
  const includeUsage = request.stream_options?.include_usage === true;
  const envelope = {
    id: `chatcmpl-slow${++served}`,
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model: typeof request.model === 'string' ? request.model : 'unknown',
    system_fingerprint: 'fp_slow',
  };
  const frame = (choices: unknown[], usage: unknown = null) =>
    `data: ${JSON.stringify({ ...envelope, choices, ...(includeUsage ? { usage } : {}) })}\n\n`;
  const choice = (delta: object, finishReason: string | null = null) => ({ index: 0, delta, logprobs: null, finish_reason: finishReason });

  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  res.write(frame([choice({ role: 'assistant', content: '', refusal: null })]));
  let sent = 0;
  let timer: NodeJS.Timeout | undefined;
  const next = () => {
    if (sent === chunks) {
      const usage = { prompt_tokens: 12, completion_tokens: chunks, total_tokens: 12 + chunks };
      res.end(frame([choice({}, 'stop')]) + (includeUsage ? frame([], usage) : '') + 'data: [DONE]\n\n');
      return;
    }
    res.write(frame([choice({ content: `${sent}@${now().toFixed(3)} ` })]));
    sent++;
    timer = setTimeout(next, MIN_GAP_MS + Math.random() * (MAX_GAP_MS - MIN_GAP_MS));
  };
  timer = setTimeout(next, MIN_GAP_MS + Math.random() * (MAX_GAP_MS - MIN_GAP_MS));
  // A client that leaves (an aborted generation) stops the answer. `close` on the response, not
  // on the socket: the service's keep-alive agent sends many requests over one socket.
  res.once('close', () => {
    clearTimeout(timer);
  });
}

const server = createServer((req, res) => {
  const path = req.url ?? '';
  if (req.method === 'POST' && path === '/v1/chat/completions') {
    readBody(req)
      .then((body) => {
        const request = JSON.parse(body) as CompletionsRequest & { stream?: unknown };
        if (request.stream !== true) {
          res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"This upstream only streams."}}');
          return;
        }
        streamAnswer(res, request);
      })
      .catch(() => {
        // A body that did not arrive whole, or is not JSON: no answer a client could mistake for one.
        res.destroy();
      });
    return;
  }
  if (req.method === 'GET' && path === '/v1/models') {
    const data = ['gpt-4o-mini'].map((id) => ({ id, object: 'model', created: 1_715_367_049, owned_by: 'system' }));
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data }));
    return;
  }
  res.writeHead(404, { 'content-type': 'application/json' }).end(`{"error":{"message":"Invalid URL (${req.method ?? ''} ${path})"}}`);
});
// Thousands of connections arrive at once: a backlog as deep as the kernel allows (somaxconn).
server.listen(0, '127.0.0.1', 4096, () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}/v1` })}\n`);
});
process.once('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
