import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeFolder, type Folder } from '../helpers/fixture-folders.js';
import { sandboxAvailable } from '../helpers/sandbox.js';
import { startTestService, type TestService } from '../helpers/test-service.js';
import { open, wsUrl, type TestSocket } from '../helpers/ws-client.js';
import { waitFor } from '../helpers/wait-for.js';

// CONTRACT §11 "Typed input" on a real sandboxed terminal: while a nested shell or an interpreter
// holds the foreground (read from the kernel), what is typed is taken a line at a time and each
// line judged as an execute is; other programs get keystrokes as they come. Every line is audited,
// in full while the terminal echoes and as its length while it does not.

type TerminalFrame = { type: string; [key: string]: unknown };
type AuditEntry = { risk: string | null; details: Record<string, unknown> };

const frames = (client: TestSocket, stop: (frame: TerminalFrame) => boolean, timeoutMs = 10_000) =>
  client.until((frame) => stop(frame as unknown as TerminalFrame), timeoutMs) as unknown as Promise<TerminalFrame[]>;
const isType = (type: string) => (frame: TerminalFrame) => frame.type === type;

describe.runIf(sandboxAvailable)('typed input', () => {
  let service: TestService;
  let workspace: Folder;
  let terminalId: string;
  let viewer: TestSocket;

  beforeAll(async () => {
    workspace = makeFolder();
    // A confirmed program waits for its end up to the command timeout: short, for the interactive ones here.
    service = await startTestService('sqlite', { ENABLE_SYSTEM_COMMANDS: 'true', COMMAND_TIMEOUT_MS: '1000' });
    await service.request('POST', '/api/workspaces/add', { json: { name: 'typed', path: workspace.path } });
  });
  afterAll(async () => {
    await service[Symbol.asyncDispose]();
    workspace[Symbol.dispose]();
  });
  beforeEach(async () => {
    mkdirSync(join(workspace.path, 'build'), { recursive: true });
    terminalId = (await service.request('POST', '/api/terminals', { json: {} })).body.terminalId as string;
    viewer = await open(wsUrl(service.url, `/api/terminals/${terminalId}/ws`));
    await frames(viewer, isType('status'));
  });
  afterEach(async () => {
    viewer.close();
    await service.request('DELETE', `/api/terminals/${terminalId}`);
  });

  const terminal = () => {
    const session = service.service.deps.terminals.find(terminalId);
    if (!session) throw new Error('terminal gone');
    return session;
  };
  const confirm = (commandId: unknown) => service.request('POST', '/api/security/confirm', { json: { commandId, confirmed: true } });
  /** Starts a program that is high to start, confirmed as a user would, and waits until it reads the terminal. */
  const startConfirmed = async (command: string, reader: 'shell' | 'interpreter' | 'program') => {
    viewer.send({ type: 'execute', command });
    const [held] = (await frames(viewer, isType('confirmation_required'))).filter(isType('confirmation_required'));
    const confirmed = confirm(held?.commandId);
    await waitFor(() => (terminal().foregroundReader().kind === reader ? true : undefined), 10_000, `${command} to read the terminal`);
    expect((await confirmed).status).toBe(200);
  };
  /** A child of the nested shell holds the terminal (the foreground group is not the shell's). */
  const childHolds = () => {
    const reader = terminal().foregroundReader();
    if (reader.kind !== 'shell') return false;
    const stat = readFileSync(`/proc/${String(reader.pid)}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[2] !== fields[5];
  };
  const inputEntries = async () =>
    ((await service.request('GET', '/api/audit/log?type=terminal&limit=100')).body.entries as AuditEntry[])
      .filter((entry) => entry.details.action === 'input' && entry.details.terminalId === terminalId);

  it('judges each line typed into a nested shell: a recursive delete is held, a touch runs, both audited in full', async () => {
    await startConfirmed('ssh-agent bash', 'shell');
    viewer.send({ type: 'input', data: 'rm -r build\r' });
    const held = (await frames(viewer, isType('confirmation_required'))).at(-1);
    expect(held).toMatchObject({ type: 'confirmation_required', command: 'rm -r build', risk: 'high', reasons: expect.arrayContaining([expect.stringMatching(/recursive delete: build/)]) });
    viewer.send({ type: 'input', data: 'touch typed-ok\r' });
    await waitFor(() => (existsSync(join(workspace.path, 'typed-ok')) ? true : undefined), 10_000, 'the typed touch');
    expect(existsSync(join(workspace.path, 'build'))).toBe(true);

    const entries = await inputEntries();
    expect(entries).toEqual(expect.arrayContaining([
      expect.objectContaining({ risk: 'high', details: expect.objectContaining({ reader: 'shell', program: 'bash', line: 'rm -r build', outcome: 'held', workingDirectory: workspace.path }) }),
      expect.objectContaining({ risk: 'medium', details: expect.objectContaining({ reader: 'shell', line: 'touch typed-ok', outcome: 'sent' }) }),
    ]));

    // Confirmed, the held line is typed into the same shell.
    expect((await confirm(held?.commandId)).status).toBe(200);
    await waitFor(() => (existsSync(join(workspace.path, 'build')) ? undefined : true), 10_000, 'the confirmed delete');
  });

  it('judges a nested shell through what earlier typed lines left in it', async () => {
    await startConfirmed('ssh-agent bash', 'shell');
    viewer.send({ type: 'input', data: 'BASH_CMDS[ls]=/usr/bin/rm\r' });
    viewer.send({ type: 'input', data: 'ls -r build\r' });
    const held = (await frames(viewer, isType('confirmation_required'))).at(-1);
    expect(held).toMatchObject({ command: 'ls -r build', risk: 'high', reasons: expect.arrayContaining([expect.stringMatching(/recursive delete/)]) });
    expect(existsSync(join(workspace.path, 'build'))).toBe(true);
  });

  it('refuses control and escape sequences to a shell with an error frame, and takes Ctrl-D', async () => {
    await startConfirmed('ssh-agent bash', 'shell');
    for (const data of ['\u001b[A', 'rm -r build\u007f\u007f\r', '\u0015']) {
      viewer.send({ type: 'input', data });
      expect((await frames(viewer, isType('error'))).at(-1)).toMatchObject({ type: 'error', code: 'INVALID_REQUEST', message: expect.stringMatching(/control and escape sequences are refused/) });
    }
    expect(existsSync(join(workspace.path, 'build'))).toBe(true);
    // Ctrl-D ends the nested shell, and with it ssh-agent's command.
    viewer.send({ type: 'input', data: '\u0004' });
    expect((await frames(viewer, isType('exit'))).at(-1)).toMatchObject({ type: 'exit' });
  });

  it('holds every line typed into an interpreter', async () => {
    await startConfirmed('python3', 'interpreter');
    viewer.send({ type: 'input', data: "import shutil; shutil.rmtree('build')\r" });
    const held = (await frames(viewer, isType('confirmation_required'))).at(-1);
    expect(held).toMatchObject({ risk: 'high', reasons: [expect.stringMatching(/typed into python3/)] });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(existsSync(join(workspace.path, 'build'))).toBe(true);
  });

  it('passes keystrokes to an editor and records each line it showed, :! included', async () => {
    await startConfirmed('vim -u NONE notes.txt', 'program');
    viewer.send({ type: 'input', data: ':!touch from-vim\r' });
    await waitFor(() => (existsSync(join(workspace.path, 'from-vim')) ? true : undefined), 10_000, "vim's shell escape");
    const entries = await inputEntries();
    expect(entries).toEqual(expect.arrayContaining([expect.objectContaining({ details: expect.objectContaining({ reader: 'program', program: 'vim.basic', line: ':!touch from-vim' }) })]));
  });

  it('records a line typed with echo off as its length only', async () => {
    viewer.send({ type: 'execute', command: 'stty -echo; head -n 1 > /dev/null; stty echo' });
    await waitFor(() => (terminal().foregroundReader().program === 'head' ? true : undefined), 10_000, 'head to read');
    viewer.send({ type: 'input', data: 'hunter2-secret\r' });
    await frames(viewer, isType('exit'));
    const entries = await inputEntries();
    expect(entries.map((entry) => entry.details.line)).toContainEqual({ echo: false, length: 14 });
    expect(JSON.stringify(await service.request('GET', '/api/audit/log?limit=200'))).not.toContain('hunter2');
  });

  it('judges a line typed while a child of the nested shell holds the terminal (left for the shell to read)', async () => {
    await startConfirmed('ssh-agent bash', 'shell');
    viewer.send({ type: 'input', data: 'sleep 3\r' });
    await waitFor(() => (terminal().foregroundReader().kind === 'shell' && childHolds() ? true : undefined), 10_000, 'sleep to hold the terminal');
    viewer.send({ type: 'input', data: 'rm -r build\r' });
    expect((await frames(viewer, isType('confirmation_required'))).at(-1)).toMatchObject({ command: 'rm -r build', risk: 'high' });
    await new Promise((resolve) => setTimeout(resolve, 3500));
    expect(existsSync(join(workspace.path, 'build'))).toBe(true);
  });

  it.each([
    ['a renamed copy of bash', 'cp-bash.sh', './copied-shell'],
    ['a shell behind script', null, 'script -q /dev/null'],
    ['a shell in a session of its own', null, 'setsid -w bash'],
  ])('finds %s and judges what is typed into it', async (_name, maker, start) => {
    if (maker !== null) {
      workspace.file(maker, '#!/bin/sh\ncp /bin/bash copied-shell\n', 0o755);
      await service.request('POST', `/api/terminals/${terminalId}/execute`, { json: { command: `./${maker}` } });
    }
    viewer.send({ type: 'execute', command: start });
    const first = await frames(viewer, (frame) => frame.type === 'confirmation_required' || (frame.type === 'status' && frame.status === 'busy'));
    const held = first.find(isType('confirmation_required'));
    if (held !== undefined) void confirm(held.commandId);
    await waitFor(() => (terminal().foregroundReader().kind === 'shell' ? true : undefined), 10_000, `${start} to read the terminal`);
    viewer.send({ type: 'input', data: 'rm -r build\r' });
    expect((await frames(viewer, isType('confirmation_required'))).at(-1)).toMatchObject({ command: 'rm -r build', risk: 'high' });
    expect(existsSync(join(workspace.path, 'build'))).toBe(true);
  });

  it('holds a line that history expansion would rewrite, and refuses a tab (completion)', async () => {
    await startConfirmed('ssh-agent bash', 'shell');
    viewer.send({ type: 'input', data: 'ls -r build\r' });
    viewer.send({ type: 'input', data: '^ls^rm\r' });
    expect((await frames(viewer, isType('confirmation_required'))).at(-1)).toMatchObject({ command: '^ls^rm', reasons: [expect.stringMatching(/history expansion/)] });
    viewer.send({ type: 'input', data: 'shre\t -u x\r' });
    expect((await frames(viewer, isType('error'))).at(-1)).toMatchObject({ code: 'INVALID_REQUEST' });
    expect(existsSync(join(workspace.path, 'build'))).toBe(true);
  });
});
