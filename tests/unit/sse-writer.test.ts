import { once } from 'node:events';
import { request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { StreamJob, type FollowableStream, type SequencedEvent } from '../../src/core/streams/stream-job.js';
import { writeSse } from '../../src/realtime/sse-writer.js';

// The SSE writer against a real HTTP server and client: a reader that leaves must end the writer
// (its ping timer, its wait for `drain`), whenever it leaves, or the job stays pinned in memory.

/** A stream that yields an event every 10 ms until its reader's signal aborts. */
function endlessStream(): FollowableStream & { abortedBy: () => boolean } {
  let aborted = false;
  return {
    id: '3f8a1c52-6a34-4e0f-9d7e-2c1b5a4f8e90',
    ownerId: 'local',
    provider: 'ollama',
    abortedBy: () => aborted,
    doneSeq: () => Promise.resolve(null),
    async *follow() {
      // Not used by the writer.
    },
    async *followInBatches(_after: number, signal?: AbortSignal): AsyncGenerator<readonly SequencedEvent[]> {
      let seq = 0;
      while (signal?.aborted !== true) {
        seq += 1;
        yield [{ seq, event: { type: 'text', content: 'x'.repeat(64 * 1024) } }];
        await sleep(10);
      }
      aborted = true;
    },
  };
}

describe('writeSse', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('ends at once when the reader left before the headers went out (the provider was slow)', async () => {
    const stream = endlessStream();
    let started!: (writing: { ended: Promise<void> }) => void;
    const writing = new Promise<{ ended: Promise<void> }>((resolve) => (started = resolve));
    const app = express();
    app.get('/stream', (req, res) => {
      // As on a chat path: the client gives up while the procedure still waits for the provider.
      req.socket.once('close', () => {
        started({ ended: writeSse(res, stream, 0, 50) });
      });
    });
    server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    const client = request({ host: '127.0.0.1', port, path: '/stream' });
    client.on('error', () => undefined);
    client.end();
    await sleep(50);
    client.destroy();
    // The writer's promise is wrapped, so waiting for it to start does not wait for it to end.
    const { ended } = await writing;
    const outcome = await Promise.race([ended.then(() => 'ended'), sleep(2000).then(() => 'still writing')]);
    expect(outcome).toBe('ended');
    expect(stream.abortedBy()).toBe(true);
  });

  it('ends when the reader leaves in the middle of the stream', async () => {
    const stream = endlessStream();
    let writing: Promise<void> | undefined;
    const app = express();
    app.get('/stream', (_req, res) => {
      writing = writeSse(res, stream, 0, 50);
    });
    server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    const client = request({ host: '127.0.0.1', port, path: '/stream' });
    client.on('error', () => undefined);
    const responded = once(client, 'response') as Promise<[IncomingMessage]>;
    client.end();
    const [response] = await responded;
    // Read nothing, so the server's buffer fills and the writer waits for `drain`; then leave.
    response.pause();
    await sleep(200);
    client.destroy();
    const outcome = await Promise.race([writing?.then(() => 'ended'), sleep(2000).then(() => 'still writing')]);
    expect(outcome).toBe('ended');
    expect(stream.abortedBy()).toBe(true);
  });

  // A job of this instance is followed by a direct call per batch instead of its generator: the
  // same guarantees, checked again on that path.
  describe('a job of this instance (followed live)', () => {
    const metadata = { conversationId: 'c', messageId: 'm', provider: 'ollama', model: 'x', finishReason: 'stop' as const, usage: { inputTokens: 0, outputTokens: 0 }, durationMs: 1, timeToFirstTokenMs: 1 };
    const listenersOf = (job: StreamJob) => (Reflect.get(job, 'listeners') as Set<unknown>).size;

    async function serve(job: StreamJob, after: number, pingMs = 60_000) {
      let writing: Promise<void> | undefined;
      let reply: express.Response | undefined;
      const app = express();
      app.get('/stream', (_req, res) => {
        reply = res;
        writing = writeSse(res, job, after, pingMs);
      });
      server = app.listen(0, '127.0.0.1');
      await once(server, 'listening');
      return { port: (server.address() as AddressInfo).port, writing: () => writing, buffered: () => reply?.writableLength ?? 0 };
    }

    async function readAll(port: number): Promise<string> {
      const client = request({ host: '127.0.0.1', port, path: '/stream' });
      const responded = once(client, 'response') as Promise<[IncomingMessage]>;
      client.end();
      const [response] = await responded;
      response.setEncoding('utf8');
      let body = '';
      for await (const piece of response) body += piece as string;
      return body;
    }

    it('writes what the job has and what it pushes later, in order with their ids, and ends after done', async () => {
      const job = new StreamJob('3f8a1c52-6a34-4e0f-9d7e-2c1b5a4f8e91', 'local', 'ollama');
      job.push({ type: 'text', content: 'one' });
      job.push({ type: 'text', content: 'two' });
      const { port, writing } = await serve(job, 1, 30);
      const reading = readAll(port);
      await sleep(100);
      job.push({ type: 'text', content: 'three' });
      job.push({ type: 'done', metadata });
      const body = await reading;
      await writing();
      const ids = [...body.matchAll(/^id: (.+)$/gm)].map((match) => match[1]);
      expect(ids).toEqual([`${job.id}:2`, `${job.id}:3`, `${job.id}:4`]);
      expect(body).toContain('data: {"type":"text","content":"two"}');
      expect(body).toContain('data: {"type":"text","content":"three"}');
      // Quiet for 100 ms with a 30 ms interval: pinged meanwhile, from the shared wheel.
      expect(body).toContain(': ping');
      expect(listenersOf(job)).toBe(0);
    });

    it('ends when the reader leaves in the middle; the job runs on and no longer calls the writer', async () => {
      const job = new StreamJob('3f8a1c52-6a34-4e0f-9d7e-2c1b5a4f8e92', 'local', 'ollama');
      const { port, writing } = await serve(job, 0);
      const client = request({ host: '127.0.0.1', port, path: '/stream' });
      client.on('error', () => undefined);
      const responded = once(client, 'response') as Promise<[IncomingMessage]>;
      client.end();
      job.push({ type: 'text', content: 'first' });
      const [response] = await responded;
      await once(response, 'data');
      expect(listenersOf(job)).toBe(1);
      client.destroy();
      const outcome = await Promise.race([writing()?.then(() => 'ended'), sleep(2000).then(() => 'still writing')]);
      expect(outcome).toBe('ended');
      expect(listenersOf(job)).toBe(0);
      job.push({ type: 'text', content: 'after the reader left' });
      expect(job.running).toBe(true);
    });

    it('waits for drain when the reader does not read, and ends when it then leaves', async () => {
      const job = new StreamJob('3f8a1c52-6a34-4e0f-9d7e-2c1b5a4f8e93', 'local', 'ollama');
      const { port, writing, buffered } = await serve(job, 0);
      const client = request({ host: '127.0.0.1', port, path: '/stream' });
      client.on('error', () => undefined);
      const responded = once(client, 'response') as Promise<[IncomingMessage]>;
      client.end();
      job.push({ type: 'text', content: 'start' });
      const [response] = await responded;
      response.pause();
      // 16 MB, far more than the sockets' buffers hold: the writer must stop at a full buffer
      // and leave the rest in the job, not copy it into the reply's memory.
      for (let index = 0; index < 256; index++) {
        job.push({ type: 'text', content: 'x'.repeat(64 * 1024) });
        await new Promise((resolve) => setImmediate(resolve));
      }
      await sleep(200);
      expect(buffered()).toBeGreaterThan(0);
      expect(buffered()).toBeLessThan(256 * 1024);
      client.destroy();
      const outcome = await Promise.race([writing()?.then(() => 'ended'), sleep(2000).then(() => 'still writing')]);
      expect(outcome).toBe('ended');
      expect(listenersOf(job)).toBe(0);
    });
  });
});
