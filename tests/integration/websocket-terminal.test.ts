import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeFolder, type Folder } from '../helpers/fixture-folders.js';
import { sandboxAvailable } from '../helpers/sandbox.js';
import { startTestService, type TestService } from '../helpers/test-service.js';
import { connect, open, wsUrl, type TestSocket } from '../helpers/ws-client.js';
import { requestAs, startAuthService } from '../helpers/auth-service.js';
import { startIdentityProvider } from '../helpers/identity-provider.js';

// `/api/terminals/:terminalId/ws` (CONTRACT §8) on a real sandboxed PTY: execute through the
// command pipeline, the frame sequence of one command, input to running programs only, resize,
// replay on connect, several viewers, confirmation, refusal, the shell's own end, ownership and
// token expiry.

type TerminalFrame = { type: string; [key: string]: unknown };

/** The terminal channel's frames are bare JSON objects; the helper's queue holds them as parsed. */
const frames = (client: TestSocket, stop: (frame: TerminalFrame) => boolean) =>
  client.until((frame) => stop(frame as unknown as TerminalFrame), 10_000) as unknown as Promise<TerminalFrame[]>;
const outputOf = (received: TerminalFrame[]) => received.filter((frame) => frame.type === 'output').map((frame) => frame.data as string).join('');
const isStatus = (status: string) => (frame: TerminalFrame) => frame.type === 'status' && frame.status === status;

describe.runIf(sandboxAvailable)('the terminal WebSocket', () => {
  let service: TestService;
  let workspace: Folder;
  let terminalId: string;
  beforeAll(async () => {
    workspace = makeFolder();
    service = await startTestService('sqlite', { ENABLE_SYSTEM_COMMANDS: 'true' });
    await service.request('POST', '/api/workspaces/add', { json: { name: 'ws-terminal', path: workspace.path } });
    terminalId = (await service.request('POST', '/api/terminals', { json: {} })).body.terminalId as string;
  });
  afterAll(async () => {
    await service[Symbol.asyncDispose]();
    workspace[Symbol.dispose]();
  });

  const terminalUrl = (id: string) => wsUrl(service.url, `/api/terminals/${id}/ws`);

  it('one execute: status busy, its output, exit with its code, status running; a second viewer sees it too', async () => {
    const viewer = await open(terminalUrl(terminalId));
    expect((await frames(viewer, isStatus('running'))).at(-1)).toEqual({ type: 'status', status: 'running' });
    const other = await open(terminalUrl(terminalId));
    await frames(other, isStatus('running'));

    viewer.send({ type: 'execute', command: 'echo hello-ws; (exit 4)' });
    const received = await frames(viewer, (frame) => frame.type === 'exit');
    expect(received[0]).toEqual({ type: 'status', status: 'busy' });
    expect(outputOf(received)).toContain('hello-ws');
    expect(received.at(-1)).toEqual({ type: 'exit', exitCode: 4 });
    expect((await frames(viewer, (frame) => frame.type === 'status')).at(-1)).toEqual({ type: 'status', status: 'running' });
    expect(outputOf(await frames(other, (frame) => frame.type === 'exit'))).toContain('hello-ws');
    viewer.close();
    other.close();
  });

  it('replays the recent output to a viewer that connects later', async () => {
    const late = await open(terminalUrl(terminalId));
    const first = await frames(late, (frame) => frame.type === 'status');
    expect(outputOf(first)).toContain('hello-ws');
    late.close();
  });

  it('input at the shell prompt is refused with an error frame, and nothing runs', async () => {
    const viewer = await open(terminalUrl(terminalId));
    await frames(viewer, (frame) => frame.type === 'status');
    viewer.send({ type: 'input', data: 'touch smuggled-at-prompt\n' });
    expect((await frames(viewer, (frame) => frame.type === 'error')).at(-1)).toMatchObject({ type: 'error', code: 'INVALID_REQUEST' });
    viewer.send({ type: 'execute', command: 'ls' });
    expect(outputOf(await frames(viewer, (frame) => frame.type === 'exit'))).not.toContain('smuggled');
    viewer.close();
  });

  it('input reaches the program in the foreground, echoed as on any terminal; the audit records the line it showed', async () => {
    const viewer = await open(terminalUrl(terminalId));
    await frames(viewer, (frame) => frame.type === 'status');
    // One program, not a pipeline: a pipeline's later members are forked shells until they exec,
    // and a line typed then is (rightly) judged as the shell's.
    viewer.send({ type: 'execute', command: "awk '{ print toupper($0); exit }'" });
    await frames(viewer, isStatus('busy'));
    // The shell marks the start before the program exists: typed now, the line would be judged as
    // the shell's (and recorded as such). It is typed once the program holds the terminal.
    const terminal = service.service.deps.terminals.find(terminalId);
    await expect.poll(() => terminal?.foregroundReader().kind, { timeout: 10_000 }).toBe('program');
    viewer.send({ type: 'input', data: 'typed-secret\n' });
    const received = await frames(viewer, (frame) => frame.type === 'exit');
    expect(received.filter((frame) => frame.type === 'error')).toEqual([]);
    expect(outputOf(received)).toContain('TYPED-SECRET');
    expect(received.at(-1)).toEqual({ type: 'exit', exitCode: 0 });

    const entries = (await service.request('GET', '/api/audit/log?type=terminal&limit=20')).body.entries as { details: Record<string, unknown> }[];
    // CONTRACT §11: a line typed while the terminal echoes is recorded in full (a hidden one is not,
    // see typed-input.test.ts).
    const input = entries.find((entry) => entry.details.action === 'input');
    expect(input?.details).toMatchObject({ terminalId, command: "awk '{ print toupper($0); exit }'", reader: 'program', line: 'typed-secret' });
    viewer.close();
  });

  it('Ctrl-C as input interrupts the foreground program', async () => {
    const viewer = await open(terminalUrl(terminalId));
    await frames(viewer, (frame) => frame.type === 'status');
    viewer.send({ type: 'execute', command: 'sleep 30' });
    await frames(viewer, isStatus('busy'));
    // Sent until it lands: a Ctrl-C typed before sleep holds the terminal would hit nobody.
    const ctrlC = setInterval(() => {
      viewer.send({ type: 'input', data: '\x03' });
    }, 200);
    try {
      expect((await frames(viewer, (frame) => frame.type === 'exit')).at(-1)).toEqual({ type: 'exit', exitCode: 130 });
    } finally {
      clearInterval(ctrlC);
    }
    viewer.close();
  });

  it('keystrokes a program leaves unread, or that race its end, never run as commands nor reach the next program', async () => {
    const viewer = await open(terminalUrl(terminalId));
    await frames(viewer, (frame) => frame.type === 'status');
    // `exec </dev/tty` would make an ordinary interactive bash take its next commands from the
    // terminal; this one reads them from the service's pipe whatever a command does.
    viewer.send({ type: 'execute', command: 'exec </dev/tty; sleep 0.4' });
    await frames(viewer, isStatus('busy'));
    let typed = 0;
    const typing = setInterval(() => {
      viewer.send({ type: 'input', data: `touch smuggled-${++typed}\n` });
    }, 5);
    await frames(viewer, (frame) => frame.type === 'exit');
    await new Promise((resolve) => setTimeout(resolve, 150));
    clearInterval(typing);
    expect(typed).toBeGreaterThan(20);

    // The terminal may echo the last keystrokes as they arrive; the next program reads none.
    viewer.send({ type: 'execute', command: 'timeout 0.5 cat > read-by-cat.txt' });
    await frames(viewer, (frame) => frame.type === 'exit');
    viewer.send({ type: 'execute', command: 'ls; wc -c < read-by-cat.txt' });
    const next = outputOf(await frames(viewer, (frame) => frame.type === 'exit'));
    expect(next).not.toContain('smuggled');
    expect(next).toMatch(/^0\r?$/m);
    viewer.send({ type: 'execute', command: 'echo still-here' });
    expect(outputOf(await frames(viewer, (frame) => frame.type === 'exit'))).toContain('still-here');
    viewer.close();
  });

  it('resize sets the size the programs see', async () => {
    const viewer = await open(terminalUrl(terminalId));
    await frames(viewer, (frame) => frame.type === 'status');
    viewer.send({ type: 'resize', cols: 123, rows: 45 });
    viewer.send({ type: 'execute', command: 'stty size' });
    expect(outputOf(await frames(viewer, (frame) => frame.type === 'exit'))).toContain('45 123');
    viewer.send({ type: 'resize', cols: 0, rows: 45 });
    expect((await frames(viewer, (frame) => frame.type === 'error')).at(-1)).toMatchObject({ code: 'INVALID_REQUEST' });
    viewer.close();
  });

  it('a high-risk command asks for confirmation, a critical one is refused, nothing runs', async () => {
    const viewer = await open(terminalUrl(terminalId));
    await frames(viewer, (frame) => frame.type === 'status');
    viewer.send({ type: 'execute', command: 'rm -r build' });
    const held = (await frames(viewer, (frame) => frame.type === 'confirmation_required')).at(-1);
    expect(held).toMatchObject({ type: 'confirmation_required', command: 'rm -r build', risk: 'high', commandId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    const pending = (await service.request('GET', '/api/security/pending')).body.pending as { id: string }[];
    expect(pending.map((entry) => entry.id)).toContain(held?.commandId);
    viewer.send({ type: 'execute', command: 'rm -rf /' });
    expect((await frames(viewer, (frame) => frame.type === 'error')).at(-1)).toMatchObject({ code: 'SECURITY_VIOLATION' });
    viewer.close();
  });

  it('the shell’s own end is status exited', async () => {
    const id = (await service.request('POST', '/api/terminals', { json: {} })).body.terminalId as string;
    const viewer = await open(terminalUrl(id));
    await frames(viewer, (frame) => frame.type === 'status');
    viewer.send({ type: 'execute', command: 'exit' });
    expect((await frames(viewer, isStatus('exited'))).at(-1)).toEqual({ type: 'status', status: 'exited' });
    viewer.close();
  });

  it('an unknown terminal is 404 at the upgrade', async () => {
    expect(await connect(terminalUrl('3f8a1c52-6a34-4e0f-9d7e-2c1b5a4f8e90'))).toMatchObject({ ok: false, status: 404 });
  });
});

describe.runIf(sandboxAvailable)('the terminal WebSocket with authentication', () => {
  it('belongs to the terminal owner (404 for anyone else) and closes with 4401 when the token expires', async () => {
    await using idp = await startIdentityProvider();
    using folder = makeFolder();
    await using service = await startAuthService('sqlite', idp, { ENABLE_SYSTEM_COMMANDS: 'true' });
    const dev = (sub: string, exp = Math.floor(Date.now() / 1000) + 300) => idp.sign({ sub, exp, realm_access: { roles: ['Dev'] } });
    const owner = await dev('terminal-owner');
    await requestAs(service, owner, 'POST', '/api/workspaces/add', { json: { name: 'auth-terminal', path: folder.path } });
    const id = (await requestAs(service, owner, 'POST', '/api/terminals', { json: {} })).body.terminalId as string;
    const url = wsUrl(service.url, `/api/terminals/${id}/ws`);
    expect(await connect(`${url}?access_token=${await dev('intruder')}`)).toMatchObject({ ok: false, status: 404 });
    const shortLived = await open(`${url}?access_token=${await dev('terminal-owner', Math.floor(Date.now() / 1000) + 2)}`);
    expect((await shortLived.closed).code).toBe(4401);
    const renewed = await open(`${url}?access_token=${await dev('terminal-owner', Math.floor(Date.now() / 1000) + 2)}`);
    renewed.send({ type: 'auth', token: owner });
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(renewed.socket.readyState).toBe(renewed.socket.OPEN);
    renewed.close();
  });
});

describe('the terminal WebSocket with system commands off', () => {
  it('is refused with 403 SECURITY_VIOLATION at the upgrade', async () => {
    await using service = await startTestService('sqlite');
    const refused = await connect(wsUrl(service.url, '/api/terminals/3f8a1c52-6a34-4e0f-9d7e-2c1b5a4f8e90/ws'));
    expect(refused).toMatchObject({ ok: false, status: 403, body: { error: { code: 'SECURITY_VIOLATION' } } });
  });
});
