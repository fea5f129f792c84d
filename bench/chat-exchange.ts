import { request, type Agent } from 'node:http';

// One chat exchange as the chat benchmark sends it, and how its reply is read: the time to the
// first event that carries answer text, and whether the whole answer arrived.

/** The answer the fake upstream gives every request: 20 chunks, no delay between them. */
export const benchChunks = Array.from({ length: 20 }, (_, index) => `token${String(index).padStart(2, '0')} `);
export const expectedAnswer = benchChunks.join('');
export const benchQuestion = 'Say twenty tokens.';

export type ReplyKind = 'openai-sse' | 'openai-json' | 'service-sse' | 'service-json';

export interface ChatTarget {
  url: string;
  headers: Record<string, string>;
  body: string;
  reply: ReplyKind;
}

export interface ExchangeResult {
  /** Until the first event with answer text (streams) or the whole body (JSON replies). */
  firstEventMs: number;
  ok: boolean;
}

/** An OpenAI Chat Completions request, as sent straight to the fake and through Portkey. */
export function completionsBody(stream: boolean): string {
  return JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: benchQuestion }], stream });
}

export function serviceBody(): string {
  return JSON.stringify({ provider: 'openai', message: benchQuestion, mode: 'chat' });
}

// The answer's chunks are plain words, so the text of each event can be read without JSON.parse.
const openAIContent = /"content":"([^"]*)"/g;
const serviceText = /"type":"text","content":"([^"]*)"/g;

function joined(body: string, pattern: RegExp): string {
  let text = '';
  for (const match of body.matchAll(pattern)) text += match[1] ?? '';
  return text;
}

function hasFirstEvent(kind: ReplyKind, received: string): boolean {
  switch (kind) {
    case 'openai-sse':
      // The first chunk only carries the role and `"content":""`.
      return /"content":"[^"]/.test(received);
    case 'service-sse':
      return received.includes('"type":"text"');
    case 'openai-json':
    case 'service-json':
      return false;
  }
}

function isWholeAnswer(kind: ReplyKind, body: string): boolean {
  switch (kind) {
    case 'openai-sse':
      return body.endsWith('data: [DONE]\n\n') && joined(body, openAIContent) === expectedAnswer;
    case 'service-sse':
      return body.includes('"type":"done"') && !body.includes('"type":"error"') && joined(body, serviceText) === expectedAnswer;
    case 'openai-json': {
      const parsed = JSON.parse(body) as { choices?: { message?: { content?: unknown } }[] };
      return parsed.choices?.[0]?.message?.content === expectedAnswer;
    }
    case 'service-json':
      return (JSON.parse(body) as { response?: unknown }).response === expectedAnswer;
  }
}

/** Sends one exchange on a keep-alive agent; never rejects (a failure is `ok: false`). */
export function exchange(agent: Agent, target: ChatTarget): Promise<ExchangeResult> {
  return new Promise((resolve) => {
    const started = performance.now();
    let firstEventMs: number | undefined;
    const fail = () => {
      resolve({ firstEventMs: performance.now() - started, ok: false });
    };
    const req = request(
      target.url,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(target.body), ...target.headers },
      },
      (res) => {
        res.setEncoding('utf8');
        let body = '';
        res.on('data', (chunk: string) => {
          body += chunk;
          if (firstEventMs === undefined && hasFirstEvent(target.reply, body)) firstEventMs = performance.now() - started;
        });
        res.on('end', () => {
          const endMs = performance.now() - started;
          let ok = false;
          try {
            ok = res.statusCode === 200 && isWholeAnswer(target.reply, body);
          } catch {
            // A body that is not JSON is a failed exchange, counted as such.
          }
          resolve({ firstEventMs: firstEventMs ?? endMs, ok });
        });
        res.on('error', fail);
      },
    );
    req.on('error', fail);
    req.end(target.body);
  });
}
