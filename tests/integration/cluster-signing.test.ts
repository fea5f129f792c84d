import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createClient } from 'redis';
import superjson from 'superjson';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import { localUser } from '../../src/core/auth/permissions.js';
import { ClusterSignature, MESSAGE_WINDOW_MS } from '../../src/core/cluster/cluster-signature.js';
import type { Logger } from '../../src/core/logger.js';
import { startFakeOllama, type FakeOllama } from '../fakes/index.js';
import { postgresAvailable } from '../helpers/databases.js';
import { makeFolder, type Folder } from '../helpers/fixture-folders.js';
import { freshRedisPrefix, redisAvailable, redisUrl } from '../helpers/redis.js';
import { sandboxAvailable } from '../helpers/sandbox.js';
import { openSse } from '../helpers/sse.js';
import { startTestService, type TestService } from '../helpers/test-service.js';
import { waitFor } from '../helpers/wait-for.js';

// CONTRACT §11 "Instances": with REDIS_URL, the calls instances carry for each other through Redis
// are signed with CLUSTER_SECRET. Whoever can publish on that Redis (and read it) still cannot
// make an instance run a command, confirm a held one or stop a generation: an unsigned message, one
// signed with another secret, one moved to another instance's channel and a genuine one replayed
// are each dropped and logged, while the instances' own calls keep working.

const secret = 'cluster-signing-test-secret';

describe('sealed cluster messages', () => {
  const channel = 'assistant:instance:a';
  let clock = 1_000_000;
  const now = () => clock;
  beforeEach(() => {
    clock = 1_000_000;
  });

  it('open what was sealed with the same secret for the same channel, once', () => {
    const signature = new ClusterSignature(secret, 5000, now);
    const sealed = signature.seal(channel, '{"json":{"kind":"call"}}');
    expect(sealed).toMatch(/^v1\.1000000\.[\w-]{16}\.[\w-]{43}\.\{"json":\{"kind":"call"\}\}$/);
    expect(signature.open(channel, sealed)).toEqual({ ok: true, payload: '{"json":{"kind":"call"}}' });
    expect(signature.open(channel, sealed)).toEqual({ ok: false, reason: 'replayed' });
  });

  it('refuse an unsigned message, another secret, another channel, and any changed field', () => {
    const signature = new ClusterSignature(secret, 5000, now);
    const sealed = new ClusterSignature(secret, 5000, now).seal(channel, 'payload');
    const [tag, timestamp, nonce, mac] = sealed.split('.');
    const refusal = (raw: string, on = channel) => {
      const opened = signature.open(on, raw);
      return opened.ok ? 'opened' : opened.reason;
    };
    expect(refusal('{"json":{"kind":"call"}}')).toBe('unsigned');
    expect(refusal(`v1.${timestamp}.${nonce}.${mac?.slice(1)}.payload`)).toBe('unsigned');
    expect(refusal(new ClusterSignature('another-secret-entirely', 5000, now).seal(channel, 'payload'))).toBe('bad_signature');
    expect(refusal(sealed, 'assistant:instance:b')).toBe('bad_signature');
    expect(refusal(`${tag}.${timestamp}.${nonce}.${mac}.payloaD`)).toBe('bad_signature');
    expect(refusal(`${tag}.${Number(timestamp) + 1}.${nonce}.${mac}.payload`)).toBe('bad_signature');
    expect(refusal(`${tag}.${timestamp}.${'A'.repeat(16)}.${mac}.payload`)).toBe('bad_signature');
    // None of the refused ones used up the genuine message.
    expect(refusal(sealed)).toBe('opened');
  });

  it('refuse a message sealed longer ago than the window, or as far ahead, even the first time', () => {
    const sender = new ClusterSignature(secret, 5000, now);
    const receiver = new ClusterSignature(secret, 5000, () => clock + 5001);
    expect(receiver.open(channel, sender.seal(channel, 'late'))).toEqual({ ok: false, reason: 'stale' });
    const early = new ClusterSignature(secret, 5000, () => clock - 5001);
    expect(early.open(channel, sender.seal(channel, 'from the future'))).toEqual({ ok: false, reason: 'stale' });
    const justInTime = new ClusterSignature(secret, 5000, () => clock + 5000);
    expect(justInTime.open(channel, sender.seal(channel, 'on time'))).toEqual({ ok: true, payload: 'on time' });
  });

  it('a replayed message stays refused: as a replay inside the window, as stale after it', () => {
    const signature = new ClusterSignature(secret, 5000, now);
    const sealed = signature.seal(channel, 'once');
    expect(signature.open(channel, sealed).ok).toBe(true);
    clock += 4000;
    expect(signature.open(channel, sealed)).toEqual({ ok: false, reason: 'replayed' });
    // Past the window its timestamp refuses it, whether or not its nonce is still remembered.
    clock += 6000;
    expect(signature.open(channel, signature.seal(channel, 'later')).ok).toBe(true);
    expect(signature.open(channel, sealed)).toEqual({ ok: false, reason: 'stale' });
  });
});

describe('start-up', () => {
  it('with REDIS_URL and no CLUSTER_SECRET the service refuses to start with one line naming it', () => {
    const environment: NodeJS.ProcessEnv = { ...process.env, REDIS_URL: redisUrl };
    delete environment.CLUSTER_SECRET;
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], { env: environment, encoding: 'utf8', timeout: 20_000 });
    expect(result.status).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^Invalid configuration: CLUSTER_SECRET is required with REDIS_URL\b/)]);
  });
});

interface Heard {
  channel: string;
  raw: string;
}

/** The payload of a sealed message, which anyone reading Redis can see (it is signed, not encrypted). */
function payloadOf(raw: string): unknown {
  return superjson.parse(raw.split('.').slice(4).join('.'));
}

/** What the bus logged about the messages it dropped. */
function dropsLogged(warn: MockInstance<Logger['warn']>): { channel: string; reason: string }[] {
  return warn.mock.calls
    .filter((args: unknown[]) => typeof args[1] === 'string' && args[1].startsWith('dropped a cluster message'))
    .map((args: unknown[]) => args[0] as { channel: string; reason: string });
}

describe.runIf(redisAvailable && postgresAvailable && sandboxAvailable)('an attacker with access to Redis', () => {
  let ollama: FakeOllama;
  let workspace: Folder;
  let first: TestService;
  let second: TestService;
  let prefix: string;
  let firstChannel: string;
  let secondChannel: string;
  let firstWarn: MockInstance<Logger['warn']>;
  let secondWarn: MockInstance<Logger['warn']>;
  // The attacker's own connections: one to publish, one listening to every instance's channel.
  let publisher: ReturnType<typeof createClient>;
  let listener: ReturnType<typeof createClient>;
  const heard: Heard[] = [];
  // Replies to the forged calls would come back here, where only the attacker listens.
  const attackerId = `attacker-${randomUUID()}`;
  let attackerChannel: string;

  const forgedCall = (path: string, input: unknown) =>
    superjson.stringify({
      kind: 'call',
      callId: randomUUID(),
      from: attackerId,
      call: { path, input, user: localUser, ip: '203.0.113.7', requestId: randomUUID() },
    });
  const withoutSignature = (payload: string) => payload;
  const withMadeUpSignature = (payload: string) => `v1.${Date.now()}.${'n'.repeat(16)}.${'s'.repeat(43)}.${payload}`;
  const withAnotherSecret = (payload: string) => new ClusterSignature('a-secret-the-attacker-made-up').seal(firstChannel, payload);
  const forgeries = [withoutSignature, withMadeUpSignature, withAnotherSecret];
  const expectedReasons = ['unsigned', 'bad_signature', 'bad_signature'];

  /** Publishes on the first instance's channel and checks that it (and the attacker's ear) heard it. */
  const publishToFirst = async (raw: string) => {
    expect(await publisher.publish(firstChannel, raw)).toBe(2);
  };
  const repliesToAttacker = () => heard.filter((message) => message.channel === attackerChannel);

  beforeAll(async () => {
    ollama = await startFakeOllama();
    workspace = makeFolder();
    prefix = freshRedisPrefix();
    const env = { REDIS_URL: redisUrl, CLUSTER_SECRET: secret, REDIS_KEY_PREFIX: prefix, OLLAMA_BASE_URL: ollama.url, ENABLE_SYSTEM_COMMANDS: 'true' };
    first = await startTestService('postgresql', env);
    second = await startTestService('postgresql', env, first.database);
    expect((await first.request('POST', '/api/workspaces/add', { json: { name: 'shared', path: workspace.path } })).status).toBe(200);
    firstChannel = `${prefix}instance:${first.service.deps.cluster?.instanceId ?? ''}`;
    secondChannel = `${prefix}instance:${second.service.deps.cluster?.instanceId ?? ''}`;
    attackerChannel = `${prefix}instance:${attackerId}`;
    // The bus logs through the service's logger, which these tests run silent: the spy still sees each call.
    firstWarn = vi.spyOn(first.service.deps.logger, 'warn');
    secondWarn = vi.spyOn(second.service.deps.logger, 'warn');
    publisher = createClient({ url: redisUrl });
    listener = publisher.duplicate();
    await Promise.all([publisher.connect(), listener.connect()]);
    await listener.pSubscribe(`${prefix}instance:*`, (raw, channel) => {
      heard.push({ channel, raw });
    });
  });
  afterAll(async () => {
    await listener.close();
    await publisher.close();
    await second.stop();
    await first[Symbol.asyncDispose]();
    await ollama.close();
    workspace[Symbol.dispose]();
  });
  beforeEach(() => {
    ollama.reset();
    firstWarn.mockClear();
    secondWarn.mockClear();
    heard.length = 0;
  });

  it('a forged command for a terminal is dropped and logged; sealed with the secret, the same call would run', async () => {
    const terminalId = (await first.request('POST', '/api/terminals', { json: {} })).body.terminalId as string;
    expect(terminalId).toBeDefined();
    const forgedFiles = forgeries.map((_, i) => `forged-${i}`);
    for (const [i, forge] of forgeries.entries()) {
      await publishToFirst(forge(forgedCall('terminals.execute', { terminalId, command: `touch ${forgedFiles[i]}`, waitForCompletion: true })));
    }
    await waitFor(() => (dropsLogged(firstWarn).length === forgeries.length ? true : undefined), 5000, 'the drops logged');
    expect(dropsLogged(firstWarn)).toEqual(expectedReasons.map((reason) => ({ channel: `instance:${first.service.deps.cluster?.instanceId}`, reason })));
    // Logged without the message: neither the command nor the caller it named.
    expect(JSON.stringify(firstWarn.mock.calls)).not.toMatch(/forged-|203\.0\.113\.7/);

    // The instances' own call, carried from the second to the terminal's home, runs and sees no forged file.
    const listed = await second.request('POST', `/api/terminals/${terminalId}/execute`, { json: { command: 'ls -a' } });
    expect(listed.body).toMatchObject({ success: true, exitCode: 0 });
    expect(listed.body.output).not.toContain('forged-');
    for (const file of forgedFiles) expect(existsSync(join(workspace.path, file))).toBe(false);
    expect(repliesToAttacker()).toEqual([]);

    // The control: the very same forged call, sealed with the deployment's secret, runs and is
    // answered, so the ones above failed for their signature alone.
    await publishToFirst(new ClusterSignature(secret).seal(firstChannel, forgedCall('terminals.execute', { terminalId, command: 'touch sealed', waitForCompletion: true })));
    const [reply] = await waitFor(() => (repliesToAttacker().length > 0 ? repliesToAttacker() : undefined), 10_000, 'the reply');
    expect(payloadOf(reply?.raw ?? '')).toMatchObject({ kind: 'reply', reply: { data: { success: true, exitCode: 0 } } });
    expect(existsSync(join(workspace.path, 'sealed'))).toBe(true);
    expect(dropsLogged(firstWarn)).toHaveLength(forgeries.length);
  });

  it('a forged confirmation leaves the held command pending; the genuine one from the other instance runs it', async () => {
    const terminalId = (await first.request('POST', '/api/terminals', { json: {} })).body.terminalId as string;
    mkdirSync(join(workspace.path, 'build'), { recursive: true });
    const held = await first.request('POST', `/api/terminals/${terminalId}/execute`, { json: { command: 'rm -r build' } });
    expect(held.status).toBe(202);
    const commandId = held.body.commandId as string;
    for (const forge of forgeries) await publishToFirst(forge(forgedCall('security.confirm', { commandId, confirmed: true })));
    await waitFor(() => (dropsLogged(firstWarn).length === forgeries.length ? true : undefined), 5000, 'the drops logged');
    expect(dropsLogged(firstWarn).map((drop) => drop.reason)).toEqual(expectedReasons);

    const row = await first.service.deps.store.db.pendingCommand.findUniqueOrThrow({ where: { id: commandId } });
    expect(row.status).toBe('pending');
    expect(existsSync(join(workspace.path, 'build'))).toBe(true);
    expect(repliesToAttacker()).toEqual([]);

    const confirmed = await second.request('POST', '/api/security/confirm', { json: { commandId, confirmed: true } });
    expect(confirmed.body).toMatchObject({ success: true, executed: true, exitCode: 0 });
    expect(existsSync(join(workspace.path, 'build'))).toBe(false);
  });

  it('a forged abort leaves the generation running; the genuine one from the other instance stops it', async () => {
    const chunks = Array.from({ length: 12 }, (_, i) => `w${i} `);
    ollama.enqueue({ kind: 'text', chunks, chunkDelayMs: 60 });
    const running = await openSse(`${first.url}/api/message/stream`, { json: { message: 'keep going', mode: 'chat' } });
    const streamId = running.headers.get('x-stream-id') ?? '';
    const early = await running.events((event) => event.id === `${streamId}:2`);
    for (const forge of forgeries) await publishToFirst(forge(forgedCall('streams.abort', { streamId })));
    await waitFor(() => (dropsLogged(firstWarn).length === forgeries.length ? true : undefined), 5000, 'the drops logged');
    const rest = [...early, ...(await running.events())];
    expect(rest.at(-1)?.data).toMatchObject({ type: 'done', metadata: { finishReason: 'stop' } });
    expect(
      rest
        .filter((event) => event.data.type === 'text')
        .map((event) => event.data.content as string)
        .join(''),
    ).toBe(chunks.join(''));
    expect(repliesToAttacker()).toEqual([]);

    ollama.enqueue({ kind: 'text', chunks, chunkDelayMs: 100 });
    const stopped = await openSse(`${first.url}/api/message/stream`, { json: { message: 'stop me', mode: 'chat' } });
    const stoppedId = stopped.headers.get('x-stream-id') ?? '';
    await stopped.events((event) => event.id === `${stoppedId}:2`);
    expect((await second.request('POST', `/api/streams/${stoppedId}/abort`)).body).toEqual({ success: true });
    expect((await stopped.events()).at(-1)?.data.metadata.finishReason).toBe('aborted');
  });

  it('a genuine call captured on Redis runs once: replayed at once, moved to another channel, or replayed after the window', async () => {
    const terminalId = (await first.request('POST', '/api/terminals', { json: {} })).body.terminalId as string;
    const appended = await second.request('POST', `/api/terminals/${terminalId}/execute`, { json: { command: 'echo once >> replayed.log' } });
    expect(appended.body).toMatchObject({ success: true, exitCode: 0 });
    const captured = heard.find((message) => message.channel === firstChannel && message.raw.includes('replayed.log'));
    expect(captured).toBeDefined();
    const raw = captured?.raw ?? '';

    await publishToFirst(raw);
    // Sealed for the first instance, it is refused by the second, which would otherwise run it (a 404 there, but still).
    expect(await publisher.publish(secondChannel, raw)).toBe(2);
    await waitFor(() => (dropsLogged(firstWarn).length === 1 && dropsLogged(secondWarn).length === 1 ? true : undefined), 5000, 'the drops logged');
    expect(dropsLogged(firstWarn).map((drop) => drop.reason)).toEqual(['replayed']);
    expect(dropsLogged(secondWarn).map((drop) => drop.reason)).toEqual(['bad_signature']);

    // Both instances run in this process, so moving its clock past the window moves theirs: the
    // capture is now as old as it would be had the attacker waited, and the instances' own calls
    // (sealed now) still pass.
    const realNow = Date.now.bind(Date);
    const later = vi.spyOn(Date, 'now').mockImplementation(() => realNow() + MESSAGE_WINDOW_MS + 1000);
    try {
      await publishToFirst(raw);
      await waitFor(() => (dropsLogged(firstWarn).length === 2 ? true : undefined), 5000, 'the stale drop logged');
      expect(dropsLogged(firstWarn).map((drop) => drop.reason)).toEqual(['replayed', 'stale']);
      const read = await second.request('POST', `/api/terminals/${terminalId}/execute`, { json: { command: 'cat replayed.log' } });
      expect(read.body).toMatchObject({ success: true, exitCode: 0, output: 'once' });
    } finally {
      later.mockRestore();
    }
    expect(readFileSync(join(workspace.path, 'replayed.log'), 'utf8')).toBe('once\n');
  });
});
