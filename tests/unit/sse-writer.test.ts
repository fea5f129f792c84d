import { once } from 'node:events';
import { request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import type { FollowableStream, SequencedEvent } from '../../src/core/streams/stream-job.js';
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
});
