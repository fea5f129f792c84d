import { startFakeServer, type FakeProvider } from './fake-server.js';
import { handleModelRequest, normaliseModelName, requestedModel, sendJson, type OllamaModelStore } from './ollama-models.js';
import { playScript, type ChatDialect, type Frame } from './play-script.js';
import { argumentsValue, type ChatReply } from './scripts.js';

export interface FakeOllama extends FakeProvider {
  /** Installed models, as /api/tags reports them; mutable by pull/delete. */
  installed: Set<string>;
  /** Delay between pull progress lines (default 20 ms) and the number of 'downloading' lines (default 5). */
  pullSettings: { stepDelayMs: number; steps: number; totalBytes: number };
}

/** Fake Ollama native API (`/api/chat` and model management); `url` is the origin, with no /v1. */
export async function startFakeOllama(options: { models?: string[] } = {}): Promise<FakeOllama> {
  const store: OllamaModelStore = {
    installed: new Set((options.models ?? ['llama3.2:latest']).map(normaliseModelName)),
    pullSettings: { stepDelayMs: 20, steps: 5, totalBytes: 2_019_393_189 },
  };
  const fake = await startFakeServer({
    basePath: '',
    isChat: (method, pathname) => method === 'POST' && pathname === '/api/chat',
    handle: async (exchange, takeScript) => {
      const { res, record, pathname } = exchange;
      if (record.method === 'POST' && pathname === '/api/chat') {
        const model = requestedModel(record.body);
        if (model === undefined) {
          sendJson(res, 400, { error: record.body === undefined ? 'invalid character looking for beginning of value' : 'model is required' });
          return;
        }
        // Ollama answers for installed models only; the script is not consumed for this refusal.
        if (!store.installed.has(normaliseModelName(model))) {
          sendJson(res, 404, { error: `model "${model}" not found, try pulling it first` });
          return;
        }
        const stream = (record.body as { stream?: unknown }).stream !== false;
        await playScript(exchange, takeScript(), ollamaDialect(model), stream);
        return;
      }
      if (await handleModelRequest(exchange, store)) return;
      if ((record.method === 'GET' || record.method === 'HEAD') && pathname === '/') {
        // Health checks probe the root, which answers in plain text.
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('Ollama is running');
        return;
      }
      res.writeHead(404, { 'content-type': 'text/plain' }).end('404 page not found');
    },
  });
  // Accessors rather than copies, so a test that replaces `installed` or `pullSettings` still steers the server.
  return Object.defineProperties(fake, {
    installed: { enumerable: true, get: () => store.installed, set: (value: Set<string>) => (store.installed = value) },
    pullSettings: {
      enumerable: true,
      get: () => store.pullSettings,
      set: (value: OllamaModelStore['pullSettings']) => (store.pullSettings = value),
    },
  }) as FakeOllama;
}

const errorMessages: Record<number, string> = {
  400: 'invalid request',
  401: 'unauthorized',
  404: 'model not found',
  429: 'too many requests',
  500: 'an internal error occurred',
  503: 'server busy, please try again.  maximum pending requests exceeded',
};

/** Ollama's errors are a bare `{ error: string }`, unlike OpenAI's and Anthropic's envelopes. */
export function ollamaError(status: number) {
  return { error: errorMessages[status] ?? `fake error ${status}` };
}

// Ollama reports a tool-calling turn as an ordinary stop.
const doneReasons = { stop: 'stop', length: 'length', tool_calls: 'stop' } as const;

function ollamaDialect(model: string): ChatDialect {
  const started = process.hrtime.bigint();
  const envelope = (value: object) => ({ model, created_at: new Date().toISOString(), ...value });
  const line = (value: object): string => `${JSON.stringify(envelope(value))}\n`;
  // Ollama has no tool call ids; the scripted id is dropped and arguments travel as an object.
  const toolCalls = (reply: ChatReply) => reply.calls.map((call) => ({ function: { name: call.name, arguments: argumentsValue(call) } }));
  const done = (reply: ChatReply) => {
    const total = Number(process.hrtime.bigint() - started);
    return {
      done: true,
      done_reason: doneReasons[reply.finish],
      total_duration: total,
      load_duration: 0,
      prompt_eval_count: reply.usage.input,
      prompt_eval_duration: Math.floor(total / 4),
      eval_count: reply.usage.output,
      eval_duration: Math.floor((total * 3) / 4),
    };
  };

  return {
    streamContentType: 'application/x-ndjson',
    streamFrames(reply) {
      const frames: Frame[] = reply.chunks.map((content) => ({
        data: line({ message: { role: 'assistant', content }, done: false }),
        text: true,
      }));
      if (reply.calls.length > 0) {
        frames.push({ data: line({ message: { role: 'assistant', content: '', tool_calls: toolCalls(reply) }, done: false }) });
      }
      frames.push({ data: line({ message: { role: 'assistant', content: '' }, ...done(reply) }) });
      return frames;
    },
    completeBody(reply) {
      const calls = reply.calls.length > 0 ? { tool_calls: toolCalls(reply) } : {};
      const message = { role: 'assistant', content: reply.chunks.join(''), ...calls };
      return envelope({ message, ...done(reply) });
    },
    errorBody: ollamaError,
    // Ollama's in-stream errors are a bare message, whatever went wrong.
    streamErrorFrame: (status) =>
      `${JSON.stringify(status === undefined ? { error: 'an error was encountered while running the model' } : ollamaError(status))}\n`,
    malformedStream: '{"model":"broken","created_at":\n<html>upstream proxy error</html>\n',
    malformedBody: '{"model":"broken","message":{"role":"assistant","content":',
  };
}
