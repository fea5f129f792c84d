import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { startFakeOllama } from '../fakes/index.js';
import { spawnService, type ChildService } from '../helpers/child-service.js';
import { createTestDatabase } from '../helpers/databases.js';
import { makeFolder } from '../helpers/fixture-folders.js';
import { describeOnDatabasesWithSandbox } from '../helpers/sandbox.js';
import { openSse, typesOf, type SseStream } from '../helpers/sse.js';
import { request } from '../helpers/test-service.js';
import { open, wsUrl } from '../helpers/ws-client.js';

// Issue 7's graceful shutdown: SIGTERM while 100 answers stream, a /ws socket is open and a
// terminal runs a command. Every stream must end with done(aborted) and be stored as `aborted`
// with the text it had (CONTRACT §6), every socket must be closed with a reason, no process of the
// terminal may outlive the service, and the service must exit 0 within 10 s.

const STREAMS = 100;
const CHUNKS = Array.from({ length: 100 }, (_, index) => `c${index} `);
const FULL_ANSWER = CHUNKS.join('');
/** A command line no other test runs, to find its process afterwards. */
const MARKER_SECONDS = 7919;

interface StoredMessage {
  role: string;
  content: string;
  finishReason?: string;
}

/** Processes of this machine whose command line contains the text (none when pgrep finds none). */
function processesMatching(text: string): string[] {
  try {
    return execFileSync('pgrep', ['-af', text], { encoding: 'utf8' }).trim().split('\n').filter((line) => !line.includes('pgrep'));
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

describeOnDatabasesWithSandbox('SIGTERM during 100 open streams', (kind) => {
  it('stores every answer as aborted, closes every socket with a reason, kills the shell, and exits within 10 s', async () => {
    await using fake = await startFakeOllama();
    // 10 s per answer: all of them still run when the signal lands.
    fake.setDefault({ kind: 'text', chunks: CHUNKS, chunkDelayMs: 100 });
    const database = await createTestDatabase(kind);
    using workspace = makeFolder();
    const env = { DATABASE_URL: database.url, OLLAMA_BASE_URL: fake.url, MAX_STREAMS_PER_USER: String(STREAMS), ENABLE_SYSTEM_COMMANDS: 'true' };
    let service: ChildService | undefined;
    let restarted: ChildService | undefined;
    try {
      service = await spawnService(env);
      const { url } = service;
      expect((await request(url, 'POST', '/api/workspaces/add', { json: { name: 'shutdown', path: workspace.path } })).status).toBe(200);
      const terminalId = (await request(url, 'POST', '/api/terminals', { json: {} })).body.terminalId as string;
      const terminal = await open(wsUrl(url, `/api/terminals/${terminalId}/ws`));
      await terminal.until((frame) => (frame as unknown as { status?: string }).status === 'running', 10_000);
      terminal.send({ type: 'execute', command: `sleep ${MARKER_SECONDS}` });
      await terminal.until((frame) => (frame as unknown as { status?: string }).status === 'busy', 10_000);
      expect(processesMatching(`sleep ${MARKER_SECONDS}`)).not.toEqual([]);
      const main = await open(wsUrl(url, '/ws'));

      const streams: { conversationId: string; question: string; stream: SseStream }[] = [];
      for (let index = 0; index < STREAMS; index++) {
        const question = `question ${index}`;
        const made = await request(url, 'POST', '/api/conversation/save', { json: { title: question, conversationData: { messages: [] } } });
        const conversationId = made.body.conversationId as string;
        const stream = await openSse(`${url}/api/message/stream`, { json: { message: question, mode: 'chat', conversation_id: conversationId } });
        expect(stream.status).toBe(200);
        streams.push({ conversationId, question, stream });
      }
      // Each has streamed something by now.
      await Promise.all(streams.map(({ stream }) => stream.events((event) => event.data.type === 'text')));

      const signalledAt = Date.now();
      service.child.kill('SIGTERM');
      const ends = await Promise.all(streams.map(({ stream }) => stream.events()));
      const [terminalClosed, mainClosed] = await Promise.all([terminal.closed, main.closed]);
      const exit = await service.exit;
      expect(Date.now() - signalledAt).toBeLessThan(10_000);
      expect(exit).toEqual({ code: 0, signal: null });

      for (const events of ends) {
        expect(typesOf(events).slice(-2)).toEqual(['context_update', 'done']);
        expect(events.at(-1)?.data.metadata.finishReason).toBe('aborted');
      }
      for (const closed of [terminalClosed, mainClosed]) expect(closed).toEqual({ code: 1001, reason: 'Server shutting down' });
      expect(processesMatching(`sleep ${MARKER_SECONDS}`)).toEqual([]);
      // Nor the terminal's cgroups (CONTRACT §11): the stop waited for their removal.
      expect(leftoverGroups(terminalId)).toEqual([]);

      restarted = await spawnService(env);
      for (const { conversationId, question } of streams) {
        const reply = await request(restarted.url, 'GET', `/api/conversation/${conversationId}`);
        const messages = (reply.body.messages as StoredMessage[]).map(({ role, content, finishReason }) => ({ role, content, finishReason }));
        expect(messages).toHaveLength(2);
        expect(messages[0]).toEqual({ role: 'user', content: question, finishReason: undefined });
        expect(messages[1]).toMatchObject({ role: 'assistant', finishReason: 'aborted' });
        // What was streamed before the signal was stored.
        expect(messages[1]?.content).not.toBe('');
        expect(FULL_ANSWER.startsWith(messages[1]?.content ?? '')).toBe(true);
      }
      // Nothing was left mid-stream for the start-up to close.
      expect(restarted.lines.some((line) => line.includes('closed answers interrupted by an earlier crash'))).toBe(false);
    } finally {
      service?.child.kill('SIGKILL');
      restarted?.child.kill('SIGKILL');
      await Promise.all([service?.exit, restarted?.exit]);
      await database.drop();
    }
  }, 120_000);
});

/** The cgroup folders named after a terminal, in every hierarchy this machine mounts. */
function leftoverGroups(terminalId: string): string[] {
  const found: string[] = [];
  const walk = (folder: string, depth: number) => {
    let names: string[];
    try {
      names = readdirSync(folder, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
    } catch {
      return;
    }
    for (const name of names) {
      if (name === `assistant-${terminalId}`) found.push(join(folder, name));
      else if (depth < 4) walk(join(folder, name), depth + 1);
    }
  };
  walk('/sys/fs/cgroup', 0);
  return found;
}
